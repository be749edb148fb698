/**
 * The operator's audit of a store: every name in its keyspace, including the ones `list()` hides
 * (a damaged header, a damaged body, a name that is not a legal key, something that is not an
 * entry at all). `agentmem check` and `agentmem export` are built on it.
 *
 * @module
 */

import { MemoryError } from "./errors.ts";
import type { AuditEntry, CallOptions, Entry, Store, StoreAudit } from "./types.ts";
import type { BackendOps, Call } from "./backend.ts";
import { extensionsOf, runCall } from "./build.ts";

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
    async (call) => {
      const found = audit === undefined ? await readEach(store, call) : await audit(call);
      return ext === undefined ? found : withEvidence(ext.ops, found, call);
    },
  );
}

// The history's problems (and what it cannot prove) beside the keyspace's.
async function withEvidence(ops: BackendOps, audit: StoreAudit, call: Call): Promise<StoreAudit> {
  if (ops.history === undefined) return audit;
  const evidence = await ops.history.evidence(call);
  return {
    ...audit,
    history: evidence.problems,
    ...(evidence.notes.length === 0 ? {} : { notes: evidence.notes }),
  };
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
