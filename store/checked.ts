// A per-call request that a write be revision-checked whatever the store's default: `update` and
// `delete` then write only if the key still holds the revision the call's scope recorded (its
// last read or write), else `StaleError`, on every backend built by `buildStore` (the file
// backend's `readBeforeUpdate: false` included). The tools' read-modify-write edits (Claude's
// memory tool's str_replace, insert and rename) go through it, so no edit is ever lost to a
// concurrent one. A symbol, not a field of `CallOptions`: it is a mechanism of this library's
// tools, not part of the contract a third-party store implements (which ignores it).

import type { CallOptions } from "./types.ts";

/** The call-options key that asks for a revision-checked write. */
export const CHECKED: unique symbol = Symbol("agentmem.checked");

/** `opts` with the revision check asked for. */
export function checkedCall(opts: CallOptions): CallOptions {
  return { ...opts, [CHECKED]: true } as CallOptions;
}

/** Whether `opts` asks for a revision-checked write. */
export function isChecked(opts: unknown): boolean {
  return opts !== null && typeof opts === "object" &&
    (opts as Record<symbol, unknown>)[CHECKED] === true;
}
