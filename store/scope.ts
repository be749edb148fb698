/**
 * One run's record of which keys it has read, and at which revision.
 *
 * @module
 */

import { ConfigError } from "./errors.ts";
import { validateKey } from "./validate.ts";
import { describeType, quote } from "./text.ts";
import { type Budget, BudgetCounter, type BudgetUsed, checkBudget, readBudget } from "./_budget.ts";
import { randomHex } from "./random.ts";

export type { Budget, BudgetUsed };

/** The `kind` tag every scope snapshot carries, so a journal reader can pick them out. */
export const SCOPE_SNAPSHOT_KIND = "agentmem.scope";
/**
 * The snapshot format version this library writes (3: with the run's budget). It reads this one,
 * version 2 (no budget) and version 1 (which kept revisions only; a scope restored from one gets
 * a new run id).
 */
export const SCOPE_SNAPSHOT_VERSION = 3;

/** What a run id or an actor id may hold: 1 to 128 of these characters. */
export const PROVENANCE_ID = /^[A-Za-z0-9._:@=-]{1,128}$/;

/**
 * A JSON-serializable record of a scope: who the run is, whether it read untrusted input, and for
 * each store namespace (a backend's bucket and prefix, say) the revision of each key the run has
 * read or written.
 */
export interface ScopeSnapshot {
  /** Always `"agentmem.scope"`. */
  readonly kind: typeof SCOPE_SNAPSHOT_KIND;
  /** `3` when written by this library; `2` before budgets; `1` before provenance. */
  readonly version: typeof SCOPE_SNAPSHOT_VERSION | 2 | 1;
  /** The run's id (absent in version 1; a scope restored without one gets a new one). */
  readonly run?: string;
  /** The agent or user the run acts for, when the host named one. */
  readonly actor?: string;
  /** Whether the run read untrusted input (absent in version 1: `false`). */
  readonly tainted?: boolean;
  /** Present (`false`) only when the run opted out of taint propagation. */
  readonly propagateTaint?: boolean;
  /** The run's budget, when it has one (version 3). */
  readonly budget?: Budget;
  /** What the run has used of its budget, when it has one (version 3). */
  readonly used?: BudgetUsed;
  /** namespace → key → revision. */
  readonly revisions: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

/** Who a run is, for `new Scope(...)`. */
export interface ScopeOptions {
  /**
   * The host's id for the run: 1 to 128 characters of `A-Z a-z 0-9 . _ : @ = -`. Generated (16
   * hex characters) when absent. Every write the run makes records it.
   */
  readonly run?: string | undefined;
  /** The agent or user the run acts for, same characters as `run`. */
  readonly actor?: string | undefined;
  /** The run has already read untrusted input (see `taint()`). Default `false`. */
  readonly tainted?: boolean | undefined;
  /**
   * Whether reading a memory whose latest version a tainted run wrote taints this run too
   * (its next writes may carry the poison). Default `true`; `false` is the host's explicit
   * choice, for a run that never writes what it reads.
   */
  readonly propagateTaint?: boolean | undefined;
  /**
   * How many writes (creates and updates) and deletes the run may make through any store and
   * any tool, each a whole number of at least 0; a kind left out is not limited. One more is
   * refused with `BudgetError` before storage is touched; a write held for review counts. A
   * snapshot keeps what the run has used. Default: no budget.
   */
  readonly budget?: Budget | undefined;
}

/**
 * One run's record of which keys it has read and at which revision; the authority a backend that
 * enforces read-before-update checks before it overwrites. It also says who the run is (`run`,
 * `actor`) and whether it has read untrusted input (`tainted`): every write made with the scope
 * records them in the memory's history.
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
  readonly #run: string;
  readonly #actor: string | undefined;
  readonly #propagateTaint: boolean;
  #tainted: boolean;

  /**
   * Makes a scope for one run.
   *
   * @example Name the run, and mark it once it has read something untrusted
   * ```ts
   * import { Scope } from "@agentmem/memory";
   * import assert from "node:assert/strict";
   *
   * const scope = new Scope({ run: "run-42", actor: "agent:travel" });
   * assert.equal(scope.tainted, false);
   * scope.taint(); // it fetched a web page
   * assert.equal(scope.tainted, true);
   * assert.equal(Scope.restore(scope.snapshot()).run, "run-42");
   * ```
   *
   * @param options The run's id (generated when absent), its actor, whether it is tainted.
   * @throws {ConfigError} when `run` or `actor` breaks the rule, or the options are not an object.
   */
  constructor(options: ScopeOptions = {}) {
    if (options === null || typeof options !== "object") {
      throw new ConfigError(
        `Cannot make a scope: expected options { run?, actor?, tainted?, propagateTaint?, budget? }, got ${
          describeType(options)
        }`,
      );
    }
    const { run, actor, tainted, propagateTaint, budget } = options;
    this.#run = run === undefined ? randomRunId() : checkId("run", run);
    this.#actor = actor === undefined ? undefined : checkId("actor", actor);
    if (tainted !== undefined && typeof tainted !== "boolean") {
      throw new ConfigError(
        `Cannot make a scope: option "tainted" must be a boolean, got ${describeType(tainted)}`,
      );
    }
    this.#tainted = tainted ?? false;
    if (propagateTaint !== undefined && typeof propagateTaint !== "boolean") {
      throw new ConfigError(
        `Cannot make a scope: option "propagateTaint" must be a boolean, got ${
          describeType(propagateTaint)
        }`,
      );
    }
    this.#propagateTaint = propagateTaint ?? true;
    if (budget !== undefined) {
      BUDGETS.set(this, new BudgetCounter(checkBudget("make a scope", budget)));
    }
  }

  /** The run's id: the host's, or a generated one. */
  get run(): string {
    return this.#run;
  }

  /** The agent or user the run acts for, when the host named one. */
  get actor(): string | undefined {
    return this.#actor;
  }

  /**
   * Whether reading a memory a tainted run wrote last taints this run (default `true`).
   */
  get propagateTaint(): boolean {
    return this.#propagateTaint;
  }

  /** The run's budget (`new Scope({ budget })`), or `undefined` when it has none. */
  get budget(): Budget | undefined {
    return BUDGETS.get(this)?.limits;
  }

  /** How many writes and deletes the run has made of its budget; `undefined` without one. */
  get used(): BudgetUsed | undefined {
    return BUDGETS.get(this)?.used;
  }

  /** Whether the run has read untrusted input; its writes are marked as such. */
  get tainted(): boolean {
    return this.#tainted;
  }

  /**
   * Marks the run as having read untrusted input (a web page, a tool's output, a caller's
   * prompt), for the rest of the run: every later write records it, and the model is shown which
   * memories a tainted run wrote last. There is no way back.
   */
  taint(): void {
    this.#tainted = true;
  }

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
    return {
      kind: SCOPE_SNAPSHOT_KIND,
      version: SCOPE_SNAPSHOT_VERSION,
      run: this.#run,
      ...(this.#actor === undefined ? {} : { actor: this.#actor }),
      tainted: this.#tainted,
      ...(this.#propagateTaint ? {} : { propagateTaint: false }),
      ...budgetFields(BUDGETS.get(this)),
      revisions,
    };
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
 * restores it. Only snapshot objects count (what `snapshot()` returned, as the host stored it):
 * text is never taken for a snapshot, since a model or a tool can write text shaped like one.
 * Records that are not valid snapshots (other record types, damaged or foreign snapshots, text)
 * are skipped; with none, the result is an empty scope. Taint is sticky: when any earlier
 * snapshot of the same run was tainted, the result is tainted too.
 *
 * @example Resume from a journal
 * ```ts
 * import { latestScope, Scope } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const old = new Scope({ run: "run-7", tainted: true });
 * old.record("ns", "a", 1);
 * const newer = Scope.restore({ ...old.snapshot(), tainted: false });
 * newer.record("ns", "a", 2);
 * const forged = JSON.stringify({ ...newer.snapshot(), revisions: {} });
 * const journal = [{ type: "turn" }, old.snapshot(), newer.snapshot(), forged, "garbage"];
 * const resumed = latestScope(journal);
 * assert.equal(resumed.revision("ns", "a"), 2);
 * assert.equal(resumed.tainted, true); // an earlier snapshot of run-7 was tainted
 * ```
 *
 * @param records The journal's records in order; snapshots are the objects `snapshot()` made
 * (parsed back from the host's own JSON is fine: what matters is that the host stored them).
 * @returns The newest valid snapshot's scope, or an empty one.
 */
export function latestScope(records: Iterable<unknown>): Scope {
  let latest: Scope | undefined;
  const taintedRuns = new Set<string>();
  for (const record of records) {
    if (typeof record !== "object" || record === null) continue;
    const result = decodeSnapshot(record);
    if (typeof result === "string") continue;
    if (result.tainted) taintedRuns.add(result.run);
    latest = result;
  }
  if (latest === undefined) return new Scope();
  if (!latest.tainted && taintedRuns.has(latest.run)) latest.taint();
  return latest;
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
  if (record.version !== SCOPE_SNAPSHOT_VERSION && record.version !== 2 && record.version !== 1) {
    return `"version" is ${
      quote(record.version)
    }, this library reads versions 1 to ${SCOPE_SNAPSHOT_VERSION}`;
  }
  const fields = record.version === 1
    ? ["kind", "version", "revisions"]
    : ["kind", "version", "run", "actor", "tainted", "propagateTaint", "revisions"];
  if (record.version === SCOPE_SNAPSHOT_VERSION) fields.push("budget", "used");
  const extra = Object.keys(record).find((k) => !fields.includes(k));
  if (extra !== undefined) return `unknown field ${quote(extra)}`;
  if (!isPlainObject(record.revisions)) return '"revisions" is not an object';
  const options: { run?: string; actor?: string; tainted?: boolean; propagateTaint?: boolean } = {};
  if (record.version !== 1) {
    for (const field of ["run", "actor"] as const) {
      const value = record[field];
      if (value === undefined) continue;
      if (typeof value !== "string" || !PROVENANCE_ID.test(value)) {
        return `"${field}" is ${quote(value)}, not 1 to 128 characters of A-Z a-z 0-9 . _ : @ = -`;
      }
      options[field] = value;
    }
    if (record.tainted !== undefined && typeof record.tainted !== "boolean") {
      return `"tainted" is ${quote(record.tainted)}, not a boolean`;
    }
    if (record.tainted === true) options.tainted = true;
    if (record.propagateTaint !== undefined) {
      if (typeof record.propagateTaint !== "boolean") {
        return `"propagateTaint" is ${quote(record.propagateTaint)}, not a boolean`;
      }
      options.propagateTaint = record.propagateTaint;
    }
  }
  const scope = new Scope(options);
  const counter = snapshotBudget(record);
  if (typeof counter === "string") return counter;
  if (counter !== undefined) BUDGETS.set(scope, counter);
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

// Every run's budget counter, shared by the scopes made for its commands (`shareBudget`).
const BUDGETS = new WeakMap<Scope, BudgetCounter>();

/** The budget counter of `scope`'s run, or `undefined` when it has no budget. */
export function budgetOf(scope: Scope | null | undefined): BudgetCounter | undefined {
  return scope === null || scope === undefined ? undefined : BUDGETS.get(scope);
}

/**
 * Makes `own`, a scope made for one command of the run whose scope is `run`, count against the
 * run's budget (Claude's memory tool gives each edit a scope of its own).
 */
export function shareBudget(run: Scope, own: Scope): void {
  const counter = BUDGETS.get(run);
  if (counter !== undefined) BUDGETS.set(own, counter);
}

function budgetFields(counter: BudgetCounter | undefined): { budget?: Budget; used?: BudgetUsed } {
  return counter === undefined ? {} : { budget: counter.limits, used: counter.used };
}

// A snapshot's budget counter, none, or why its budget is no budget.
function snapshotBudget(record: Record<string, unknown>): BudgetCounter | undefined | string {
  if (record.budget === undefined) {
    return record.used === undefined ? undefined : '"used" is given without a "budget"';
  }
  const budget = readBudget(record.budget, '"budget"');
  if (typeof budget === "string") return budget;
  const used = readBudget(record.used ?? { writes: 0, deletes: 0 }, '"used"');
  if (typeof used === "string") return used;
  return new BudgetCounter(budget, { writes: used.writes ?? 0, deletes: used.deletes ?? 0 });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function checkId(field: "run" | "actor", value: unknown): string {
  if (typeof value !== "string" || !PROVENANCE_ID.test(value)) {
    throw new ConfigError(
      `Cannot make a scope: option "${field}" must be 1 to 128 characters of A-Z a-z 0-9 . _ : @ = -, got ${
        quote(value)
      }`,
    );
  }
  return value;
}

function randomRunId(): string {
  return randomHex(8);
}
