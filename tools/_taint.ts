// What a run that sees a memory's body takes on from it: a body whose latest version came from a
// tainted run taints the run's scope, as a read does (store/build.ts `noteRead`, honoring
// `propagateTaint`), for the places that show bodies without a scoped read (the note's pinned
// memories, search results).

import type { Scope } from "../store/scope.ts";
import type { Version } from "../store/types.ts";
import { noteRead } from "../store/build.ts";

/** Taints `scope` when `version` came from a tainted run, unless `scope` opted out. */
export function taintFrom(scope: Scope | null, version: Version | undefined): void {
  noteRead({ scope }, version);
}
