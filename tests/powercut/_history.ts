// The history half of the power-cut check: after every cut, every acknowledged write's version is
// present and readable, and history and head agree.
//
// Not done yet: the file backend's history (store/history.ts, `history(store, key)` from mod.ts)
// has not landed on main. When it does, this is the one function to fill in: for each key, the
// versions `history()` lists must include every acknowledged write of the round (by revision),
// each readable with `readVersion()` and holding exactly entryFor(key, version); the newest must
// be the head `read()` shows (or a delete when the key holds nothing); and no version may exist
// for a write that did not land.

import type { Store } from "../../mod.ts";

/** What is wrong with the store's history after a cut; empty while history has not landed. */
// deno-lint-ignore require-await
export async function checkHistory(_store: Store, _keys: readonly string[]): Promise<string[]> {
  return [];
}
