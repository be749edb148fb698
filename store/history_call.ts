// How the exported history functions run: as store calls (validation first, the span, abort
// checks, error normalization), over the backend's history or with a ConfigError saying how to
// turn it on; and the checks they share.

import { ConfigError, NotFoundError, ReadOnlyError } from "./errors.ts";
import type { HistoryOps, Listed } from "./backend.ts";
import type { HistoryProblem, Store, Version, VersionList } from "./types.ts";
import type { Call } from "./backend.ts";
import { extensionsOf, type Op, runCall, type StoreExtensions } from "./build.ts";
import { quote } from "./text.ts";

/** Runs an exported history function as a store call over `store`'s history. */
export function withHistory<T>(
  store: Store,
  call: { op: Op; what: string; opts: unknown; validate: () => string | undefined },
  fn: (ops: HistoryOps, call: Call, ext: StoreExtensions) => Promise<T>,
): Promise<T> {
  let found: { ext: StoreExtensions; ops: HistoryOps };
  try {
    found = historyOf(store, call.what);
  } catch (e) {
    return Promise.reject(e);
  }
  const { ext, ops } = found;
  return runCall(ext.backend, call.op, call.opts, call.validate, (c) => fn(ops, c, ext));
}

/** Where a store's history is, or a `ConfigError` saying how to turn it on. */
export function historyOf(store: Store, what: string): { ext: StoreExtensions; ops: HistoryOps } {
  const ext = extensionsOf(store);
  const backend = ext?.backend ?? safeBackend(store);
  const ops = ext?.ops.history;
  if (ext === undefined || ops === undefined) {
    throw new ConfigError(
      `[memory:${backend}] Cannot ${what}: this store keeps no history; ${
        ext === undefined
          ? "history needs a store opened by openFileStore, openJetStreamStore or openStore"
          : `open it with history on (option "history" omitted or { versions, days }, not false)`
      }`,
    );
  }
  return { ext, ops };
}

/** The store's backend name, or `"unknown"` when even `info()` fails. */
export function safeBackend(store: Store): string {
  try {
    return store.info().backend;
  } catch {
    return "unknown";
  }
}

const REVISION = /^[1-9][0-9]{0,15}$/;

/** Throws `NotFoundError` for a revision no version can have. */
export function checkRevision(key: string, revision: unknown): void {
  if (typeof revision !== "string" || !REVISION.test(revision)) {
    throw new NotFoundError(
      `Cannot read version ${quote(revision)} of memory ${
        quote(key)
      }: no version has that revision (a revision is a positive whole number, as history() lists it)`,
      { key },
    );
  }
}

/** Throws `ReadOnlyError` when the store is a read-only view. */
export function refuseReadOnly(ext: StoreExtensions, key: string | undefined, what: string): void {
  if (!ext.readOnly) return;
  throw new ReadOnlyError(
    `[memory:${ext.backend}] Cannot ${what}${
      key === undefined ? " the store" : ` memory ${quote(key)}`
    }: the store is read-only`,
    { key },
  );
}

/** `items` as a `VersionList` carrying `problems` (not enumerable). */
export function versionList(
  items: Version[],
  problems: readonly HistoryProblem[],
): VersionList {
  Object.defineProperty(items, "problems", { value: Object.freeze([...problems]) });
  return items as VersionList;
}

/**
 * A backend's log as the audit log shows it: across keys in the backend's order (the stream's on
 * jetstream, time on the file backend), and each key's versions in the order of its chain (by
 * revision) whatever the clocks say: a key's versions take, in chain order, the places its
 * versions hold in the backend's order.
 */
export function mergeLog(listed: Listed<Version>): Version[] {
  const byKey = new Map<string, Version[]>();
  for (const v of listed.items) {
    let list = byKey.get(v.key);
    if (list === undefined) byKey.set(v.key, list = []);
    list.push(v);
  }
  for (const list of byKey.values()) list.sort((a, b) => Number(a.revision) - Number(b.revision));
  const taken = new Map<string, number>();
  return listed.items.map(({ key }) => {
    const n = taken.get(key) ?? 0;
    taken.set(key, n + 1);
    return byKey.get(key)![n]!;
  });
}
