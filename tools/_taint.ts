// What a run that sees a memory's body takes on from it: a body whose latest version came from a
// tainted run taints the run's scope, as a read does (DESIGN "A history you can trust"), for the
// places that show bodies without a scoped read (the note's pinned memories, search results).

import type { Version } from "../store/types.ts";
import type { Scope } from "../store/scope.ts";

/** Taints `scope` when `version` came from a tainted run. */
export function taintFrom(scope: Scope | null, version: Version | undefined): void {
  if (scope !== null && version?.tainted === true) scope.taint();
}
