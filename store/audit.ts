/**
 * The operator's audit of a store: every name in its keyspace, including the ones `list()` hides
 * (a damaged header, a damaged body, a name that is not a legal key, something that is not an
 * entry at all). `agentmem check` and `agentmem export` are built on it.
 *
 * @module
 */

import { MemoryError } from "./errors.ts";
import type { CallOptions, Entry, Store } from "./types.ts";
import { type Call, extensionsOf, runCall } from "./_store.ts";
import type { HistoryProblem } from "./history.ts";

/** Why an audited name is not a healthy memory. */
export type AuditProblem = "corrupt" | "illegal_name" | "not_a_file" | "unreadable";

/** One name found in a store's keyspace. */
export interface AuditEntry {
  /** The name as found: the key for a legal one, else the raw name (file name or bucket key). */
  readonly name: string;
  /** The memory key, when the name is a legal one. */
  readonly key?: string | undefined;
  /** The parsed entry, when it is healthy. */
  readonly entry?: Entry | undefined;
  /** What is wrong, when it is not healthy. */
  readonly problem?: AuditProblem | undefined;
  /** The reason, in words, when it is not healthy. */
  readonly reason?: string | undefined;
}

/**
 * What an audit found under a lock's name (file backend: `.<key>.lock`) other than a lock held by
 * a live writer: `"foreign"`, something the library did not write (a directory, a symlink, a
 * FIFO, a file without a lock token), which makes every write of the key fail until an operator
 * removes it; `"dead"`, a lock left by a writer that died, which the next write of the key
 * removes; `"unjudged"`, a lock whose holder this process cannot judge (another pid namespace or
 * container, or no readable /proc), which writes here wait for and never break.
 */
export type AuditLockState = "foreign" | "dead" | "unjudged";

/** One lock name an audit reports. */
export interface AuditLock {
  /** The name as found (`.notes.lock`). */
  readonly name: string;
  /** The key whose writes the lock serializes, when the name carries a legal one. */
  readonly key?: string | undefined;
  /** What stands under the name (see `AuditLockState`). */
  readonly state: AuditLockState;
  /** The reason, in words, with what an operator may do. */
  readonly reason: string;
}

/** Everything an audit saw, sorted by name. */
export interface StoreAudit {
  /** Every name in the keyspace, healthy or not. */
  readonly entries: readonly AuditEntry[];
  /** Names beside the keyspace that are never memories (temp files, other files), for the record. */
  readonly ignored: readonly string[];
  /** What is wrong in the kept versions (an edited or missing version), by key; none when empty. */
  readonly history?: readonly HistoryProblem[] | undefined;
  /**
   * Lock names that are not held by a live writer (file backend; absent elsewhere). A `"foreign"`
   * one is a problem an operator must fix; the others are for the record.
   */
  readonly locks?: readonly AuditLock[] | undefined;
}

/**
 * Audits every name in `store`'s keyspace, one pass over the directory or the bucket's stream
 * (with the deadline and retries a listing has). Writes nothing. A store from a backend without
 * an audit of its own (a third-party one) is audited through what `list()` and `read()` show.
 *
 * @example Find a damaged entry that list() hides
 * ```ts
 * import { auditStore, openFileStore } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const store = await openFileStore({ dir });
 * await store.create("ok", "A healthy memory", "body");
 * await Deno.writeTextFile(`${dir}/broken.md`, "no header here");
 * const audit = await auditStore(store);
 * assert.deepEqual(audit.entries.map((e) => [e.name, e.problem]), [
 *   ["broken", "corrupt"],
 *   ["ok", undefined],
 * ]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @param store A store from `openFileStore`, `openJetStreamStore` or `openStore`.
 * @param opts An abort signal.
 * @returns Every name found, sorted, and the names beside the keyspace that are never memories.
 * @throws {UnavailableError} when the directory or the bucket cannot be read in time.
 */
export function auditStore(store: Store, opts?: Pick<CallOptions, "signal">): Promise<StoreAudit> {
  const ext = extensionsOf(store);
  const backend = ext?.backend ?? store.info().backend;
  const audit = ext?.ops.audit?.bind(ext.ops);
  return runCall(
    backend,
    "audit",
    opts,
    () => undefined,
    (call) => audit === undefined ? readEach(store, call) : audit(call),
  );
}

// A store without an audit of its own: every listed key, read.
async function readEach(store: Store, call: Call): Promise<StoreAudit> {
  const entries: AuditEntry[] = [];
  const opts = call.signal === undefined ? {} : { signal: call.signal };
  for (const { key } of await store.list(opts)) {
    let entry: Entry;
    try {
      entry = await store.read(key, opts);
    } catch (e) {
      if (!(e instanceof MemoryError)) throw e;
      if (e.code === "not_found") continue; // deleted meanwhile
      entries.push({
        name: key,
        key,
        problem: e.code === "corrupt" ? "corrupt" : "unreadable",
        reason: e.message,
      });
      continue;
    }
    entries.push({ name: key, key, entry });
  }
  return { entries, ignored: [] };
}
