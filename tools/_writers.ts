// Who wrote what a frame shows, so it says so truthfully: this run, or an earlier one. With
// history, a memory's latest version names its run, compared with the run's scope; without it
// (or with no scope), the tools remember which keys this run wrote through them (per scope, or per
// tool set when there is none), and forget a key this run deleted.

import type { Scope } from "../store/scope.ts";
import type { Store, Version } from "../store/types.ts";

/** Who wrote the memories a block shows. */
export type Writer = "earlier" | "this" | "both";

// owner (the run's scope, or the tool set's own object) → store → keys this run wrote.
const WRITTEN = new WeakMap<object, WeakMap<Store, Set<string>>>();
// A store the tools wrapped (to trace it) → the store the host passed, so every tool set and the
// system note name one store alike.
const ORIGINS = new WeakMap<Store, Store>();

/** Records that `wrapper` is `origin` wrapped by the tools. */
export function sameStore(wrapper: Store, origin: Store): void {
  if (wrapper !== origin) ORIGINS.set(wrapper, origin);
}

function origin(store: Store): Store {
  return ORIGINS.get(store) ?? store;
}

/** Remembers that the run of `owner` wrote `key` in `store` (`present`), or deleted it. */
export function noteWrite(owner: object, store: Store, key: string, present: boolean): void {
  let stores = WRITTEN.get(owner);
  if (stores === undefined) WRITTEN.set(owner, stores = new WeakMap());
  let keys = stores.get(origin(store));
  if (keys === undefined) stores.set(origin(store), keys = new Set());
  if (present) keys.add(key);
  else keys.delete(key);
}

/** Whose writes count as this run's: the run's scope, its tool set (`owner`), the store. */
export interface Who {
  readonly owner: object;
  readonly store: Store;
  readonly scope: Scope | null;
}

/**
 * Who wrote `key` last: the version's run against the scope's when both are known, else whether
 * the run of `owner` wrote it through the tools.
 */
export function writerOf(who: Who, key: string, version?: Version): Writer {
  if (version !== undefined && who.scope !== null) {
    return version.run === who.scope.run ? "this" : "earlier";
  }
  return WRITTEN.get(who.owner)?.get(origin(who.store))?.has(key) === true ? "this" : "earlier";
}

/** Who wrote a block of memories: this run, earlier runs, or both. */
export function writersOf(writers: Iterable<Writer>): Writer {
  let mine = false;
  let theirs = false;
  for (const w of writers) {
    if (w !== "earlier") mine = true;
    if (w !== "this") theirs = true;
  }
  return mine ? (theirs ? "both" : "this") : "earlier";
}
