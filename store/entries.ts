// Every memory with its body, for a search: the backend's one-pass `entries` when it has one (the
// file backend reads each file once), else `list()` and a read of each key. Nothing is recorded
// in a scope; what cannot be read (deleted meanwhile, damaged) is left out, as `list()` leaves it.

import { MemoryError } from "./errors.ts";
import type { CallOptions, Store } from "./types.ts";
import type { KeyedEntry } from "./backend.ts";
import { extensionsOf, runCall } from "./build.ts";

// Keys are read this many at a time when the backend has no one-pass read.
const READ_BATCH = 32;

/**
 * Every readable memory of `store`, with its body, in key order.
 *
 * @param store Any store; one built by this library reads its keyspace in one pass.
 * @param opts The caller's signal and provenance; a scope is ignored (nothing is recorded).
 * @throws {MemoryError} when the store fails (`UnavailableError`), as `list()` would.
 */
export function readAllEntries(store: Store, opts: CallOptions = {}): Promise<KeyedEntry[]> {
  const { scope: _scope, ...call } = opts;
  const ext = extensionsOf(store);
  const entries = ext?.ops.entries?.bind(ext.ops);
  if (ext !== undefined && entries !== undefined) {
    return runCall(ext.backend, "entries", call, () => undefined, (c) => entries(c));
  }
  return readEach(store, call);
}

async function readEach(store: Store, call: CallOptions): Promise<KeyedEntry[]> {
  const listed = await store.list(call);
  const items = Array.isArray(listed) ? listed : [];
  const out: KeyedEntry[] = [];
  for (let i = 0; i < items.length; i += READ_BATCH) {
    const batch = await Promise.all(
      items.slice(i, i + READ_BATCH).map(async ({ key }) => {
        if (typeof key !== "string") return undefined;
        try {
          const e = await store.read(key, call);
          return typeof e?.content === "string" && typeof e.description === "string"
            ? { key, description: e.description, content: e.content }
            : undefined;
        } catch (e) {
          if (e instanceof MemoryError && (e.code === "not_found" || e.code === "corrupt")) {
            return undefined;
          }
          throw e;
        }
      }),
    );
    for (const entry of batch) if (entry !== undefined) out.push(entry);
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
