/**
 * One run's record of which keys it has read, and at which revision.
 *
 * @module
 */

import { ConfigError } from "./errors.ts";
import { validateKey } from "./validate.ts";
import { describeType, quote } from "./_text.ts";

/** The `kind` tag every scope snapshot carries, so a journal reader can pick them out. */
export const SCOPE_SNAPSHOT_KIND = "agentmem.scope";
/** The snapshot format version this library writes and reads. */
export const SCOPE_SNAPSHOT_VERSION = 1;

/**
 * A JSON-serializable record of a scope: for each store namespace (a backend's bucket and prefix,
 * say), the revision of each key the run has read or written.
 */
export interface ScopeSnapshot {
  /** Always `"agentmem.scope"`. */
  readonly kind: typeof SCOPE_SNAPSHOT_KIND;
  /** Always `1`. */
  readonly version: typeof SCOPE_SNAPSHOT_VERSION;
  /** namespace → key → revision. */
  readonly revisions: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

/**
 * One run's record of which keys it has read and at which revision; the authority a backend that
 * enforces read-before-update checks before it overwrites.
 *
 * Pass it per call (`opts.scope`), so one shared store serves many concurrent runs. A missing or
 * `null` scope is valid and authorizes no overwrite. Only `read` and successful writes record a
 * revision; `list` and the start-of-run index grant nothing; `delete` drops it.
 *
 * Revisions are kept per namespace, a string the backend chooses to name one keyspace (a bucket
 * and prefix), so a revision read in one store never authorizes a write in another.
 *
 * @example Snapshot and restore across a suspend
 * ```ts
 * import { Scope } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const scope = new Scope();
 * scope.record("jetstream:notes/alice", "todo", 7);
 * const json = JSON.stringify(scope.snapshot());
 * const resumed = Scope.restore(JSON.parse(json));
 * assert.equal(resumed.revision("jetstream:notes/alice", "todo"), 7);
 * ```
 */
export class Scope {
  #revisions = new Map<string, Map<string, number>>();

  /**
   * The revision this run last read or wrote for `key` in `namespace`.
   *
   * @param namespace The backend's namespace for one keyspace.
   * @param key The key.
   * @returns The revision, or `undefined` when the run holds none.
   */
  revision(namespace: string, key: string): number | undefined {
    return this.#revisions.get(namespace)?.get(key);
  }

  /**
   * Records that the run read or wrote `key` at `revision`.
   *
   * @param namespace The backend's namespace for one keyspace.
   * @param key A legal key.
   * @param revision A non-negative safe integer.
   * @throws {InvalidKeyError} when `key` is not a legal key, which no snapshot could restore.
   * @throws {RangeError} when `revision` is not a non-negative safe integer.
   */
  record(namespace: string, key: string, revision: number): void {
    // Refused here rather than only at restore(), where one bad key would void the whole
    // snapshot and a resumed run would silently lose every revision.
    validateKey(key);
    if (!Number.isSafeInteger(revision) || revision < 0) {
      throw new RangeError(`Cannot record revision ${revision}: not a non-negative integer`);
    }
    let keys = this.#revisions.get(namespace);
    if (keys === undefined) this.#revisions.set(namespace, keys = new Map());
    // + 0 turns -0 into 0, which is what a snapshot sent through JSON will hold.
    keys.set(key, revision + 0);
  }

  /**
   * Drops the run's revision for `key`, so it cannot authorize overwriting a key re-created since.
   *
   * @param namespace The backend's namespace for one keyspace.
   * @param key The key.
   */
  forget(namespace: string, key: string): void {
    const keys = this.#revisions.get(namespace);
    keys?.delete(key);
    if (keys?.size === 0) this.#revisions.delete(namespace);
  }

  /** How many revisions the scope holds, over all namespaces. */
  get size(): number {
    let n = 0;
    for (const keys of this.#revisions.values()) n += keys.size;
    return n;
  }

  /**
   * A versioned, JSON-serializable copy of the scope, for a host's journal.
   *
   * @returns The snapshot.
   */
  snapshot(): ScopeSnapshot {
    // fromEntries defines own properties, so a key such as "__proto__" stays data.
    const revisions = Object.fromEntries(
      [...this.#revisions].map(([namespace, keys]) => [namespace, Object.fromEntries(keys)]),
    );
    return { kind: SCOPE_SNAPSHOT_KIND, version: SCOPE_SNAPSHOT_VERSION, revisions };
  }

  /**
   * Validates a snapshot (an object, or its JSON text) and rebuilds the scope it records.
   *
   * @param record A value produced by `snapshot()`, possibly through JSON.
   * @returns The restored scope.
   * @throws {ConfigError} when `record` is not a valid snapshot, saying what is wrong.
   */
  static restore(record: unknown): Scope {
    const result = decodeSnapshot(record);
    if (typeof result === "string") throw new ConfigError(`Cannot restore scope: ${result}`);
    return result;
  }
}

/**
 * Picks the newest valid scope snapshot from a run's journal records, given oldest first, and
 * restores it. Records that are not valid snapshots (other record types, damaged or foreign
 * snapshots) are skipped; with none, the result is an empty scope.
 *
 * @example Resume from a journal
 * ```ts
 * import { latestScope, Scope } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const old = new Scope();
 * old.record("ns", "a", 1);
 * const newer = new Scope();
 * newer.record("ns", "a", 2);
 * const journal = [{ type: "turn" }, old.snapshot(), JSON.stringify(newer.snapshot()), "garbage"];
 * assert.equal(latestScope(journal).revision("ns", "a"), 2);
 * ```
 *
 * @param records The journal's records in order; snapshots may be objects or JSON text.
 * @returns The newest valid snapshot's scope, or an empty one.
 */
export function latestScope(records: Iterable<unknown>): Scope {
  let latest: Scope | undefined;
  for (const record of records) {
    const result = decodeSnapshot(record);
    if (typeof result !== "string") latest = result;
  }
  return latest ?? new Scope();
}

// Returns the scope, or a sentence saying why the record is not a valid snapshot.
function decodeSnapshot(record: unknown): Scope | string {
  if (typeof record === "string") {
    try {
      record = JSON.parse(record);
    } catch {
      return "the text is not JSON";
    }
  }
  if (!isPlainObject(record)) return `expected a snapshot object, got ${describeType(record)}`;
  if (record.kind !== SCOPE_SNAPSHOT_KIND) {
    return `"kind" is ${quote(record.kind)}, expected "${SCOPE_SNAPSHOT_KIND}"`;
  }
  if (record.version !== SCOPE_SNAPSHOT_VERSION) {
    return `"version" is ${
      quote(record.version)
    }, this library reads version ${SCOPE_SNAPSHOT_VERSION}`;
  }
  const extra = Object.keys(record).find((k) => !["kind", "version", "revisions"].includes(k));
  if (extra !== undefined) return `unknown field ${quote(extra)}`;
  if (!isPlainObject(record.revisions)) return '"revisions" is not an object';
  const scope = new Scope();
  for (const [namespace, keys] of Object.entries(record.revisions)) {
    if (!isPlainObject(keys)) return `namespace ${quote(namespace)} does not map keys to revisions`;
    for (const [key, revision] of Object.entries(keys)) {
      try {
        validateKey(key);
      } catch {
        return `namespace ${quote(namespace)} holds the illegal key ${quote(key)}`;
      }
      if (typeof revision !== "number" || !Number.isSafeInteger(revision) || revision < 0) {
        return `key ${quote(key)} has revision ${quote(revision)}, not a non-negative integer`;
      }
      scope.record(namespace, key, revision);
    }
  }
  return scope;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
