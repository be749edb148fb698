// What a store's list() answered, as the tools show it: only well-formed items (a store of
// another make may hand back anything), in key order whatever order the backend used, so the same
// memories always show the same way.

import type { Item } from "../store/types.ts";

/** The items of a `list()` answer that are `{ key, description }` strings, sorted by key. */
export function listedItems(listed: unknown): Item[] {
  if (!Array.isArray(listed)) return [];
  return listed
    .filter((i): i is Item => typeof i?.key === "string" && typeof i.description === "string")
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
