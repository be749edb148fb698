/**
 * The data of the store contract: what a `Store` is, what its calls take and return, and what
 * its history and audit report. A backend implements `store/backend.ts`.
 *
 * @module
 */

import type { Scope } from "./scope.ts";

/** What a store reports about itself: its backend name and an operator-facing location. */
export interface Info {
  /** The registered backend name, e.g. `"file"` or `"jetstream"`. Lands on telemetry spans. */
  readonly backend: string;
  /**
   * An operator-configured identifier, never a filesystem path, a URL carrying userinfo, or a
   * credential. The file backend reports `""`.
   */
  readonly location: string;
}

/** One entry of a listing: the key and its one-line description. The body is a separate read. */
export interface Item {
  /** The memory's key. */
  readonly key: string;
  /** The memory's normalized one-line description. */
  readonly description: string;
}

/** A memory as read back: its description and its body. */
export interface Entry {
  /** The normalized one-line description. */
  readonly description: string;
  /** The body, exactly as written. */
  readonly content: string;
}

/** Per-call options: cancellation, the run's read-before-update record, and provenance. */
export interface CallOptions {
  /** Aborting the signal fails the call with `UnavailableError` if it has not committed yet. */
  readonly signal?: AbortSignal | undefined;
  /**
   * The run's scope. Reads record revisions in it, writes consult it on backends that enforce
   * read-before-update. A missing or `null` scope is valid and authorizes no overwrite.
   */
  readonly scope?: Scope | null | undefined;
  /**
   * The path a write came by, recorded in its version: `"api"` when absent; the tools pass their
   * name (`"memory_write"`, `"claude_memory:str_replace"`), the CLI `"cli"`, import `"import"`,
   * `restoreVersion` `"restore"`, `revertRun` `"revert"`. 1 to 64 characters of
   * `A-Z a-z 0-9 . _ : @ = -`.
   */
  readonly via?: string | undefined;
  /**
   * The model's tool call id behind a write (`ToolRunOptions.toolCallId`), recorded in its version.
   * 1 to 256 characters of `A-Z a-z 0-9 . _ : @ = -`.
   */
  readonly callId?: string | undefined;
}

/**
 * A durable key-value store of memories. Safe for concurrent use by independent processes that
 * share one backing store. Every method validates its key before it touches storage.
 *
 * There is no `close()`: no backend owns a resource to release.
 */
export interface Store {
  /** The backend's name and location. */
  info(): Info;
  /** Every memory's key and description, sorted by key. Grants no authority to overwrite. */
  list(opts?: CallOptions): Promise<Item[]>;
  /**
   * A memory's description and body; records its revision in `opts.scope`.
   *
   * @throws {NotFoundError} when the key holds nothing.
   */
  read(key: string, opts?: CallOptions): Promise<Entry>;
  /**
   * Writes a new memory.
   *
   * @throws {ExistsError} when the key already holds a memory.
   * @throws {CapacityError} when the store already holds `MAX_ENTRIES` memories.
   */
  create(key: string, description: string, content: string, opts?: CallOptions): Promise<void>;
  /**
   * Replaces what a key holds. On a backend that enforces read-before-update, a key this scope
   * never read (or read at an older revision) is refused with `StaleError` and nothing is written.
   */
  update(key: string, description: string, content: string, opts?: CallOptions): Promise<void>;
  /** Deletes a memory; resolves `true` when the key existed (for exactly one concurrent caller). */
  delete(key: string, opts?: CallOptions): Promise<boolean>;
}

// The history's data (store/history.ts has the functions that read and write it).

/** One kept version of a memory: what a write did, when, and who made it. */
export interface Version {
  /** The memory's key. */
  readonly key: string;
  /**
   * The version's revision: a positive whole number in decimal, unique within the key, and
   * higher for every later version of it (the file backend: the version's place in the key's
   * chain; jetstream: the stream sequence it was written at).
   */
  readonly revision: string;
  /** What the write did. */
  readonly op: "create" | "update" | "delete";
  /**
   * When, in ISO 8601 UTC: the storage's clock where the storage has one (the server's timestamp
   * on jetstream), the writing process's clock otherwise (the file backend). Never an order: a
   * key's versions are ordered by their place in its chain (`revision`), whatever the clocks say.
   */
  readonly at: string;
  /** The description the version holds (absent on a delete). */
  readonly description?: string;
  /** The run that wrote it (its `Scope`'s `run`), when the write had a scope. */
  readonly run?: string;
  /** The agent or user that run acts for, when the host named one. */
  readonly actor?: string;
  /** The path the write came by: `"api"`, a tool's name, `"cli"`, `"import"`, `"restore"`, ... */
  readonly via: string;
  /** The model's tool call id, when the write came from a tool call. */
  readonly callId?: string;
  /** Whether the run had read untrusted input when it wrote this. */
  readonly tainted: boolean;
  /**
   * Set when the version's description and content were removed (`redactVersion`, `purgeKey`):
   * who did it, when and why. Its place, provenance and hash stay in the chain.
   */
  readonly redacted?: Redaction;
}

/** Who removed a version's description and content, when and why. */
export interface Redaction {
  /** When (ISO 8601 UTC, the redacting process's clock). */
  readonly at: string;
  /** The actor of the redacting call's scope, when it named one. */
  readonly actor?: string;
  /** Why, in a line. */
  readonly reason: string;
}

/** How long a store keeps versions, and how many. */
export interface HistoryRetention {
  /** At least this many of every key's newest versions are kept (deleted keys included). */
  readonly versions: number;
  /** Every version younger than this many days is kept; `0` keeps none for its age alone. */
  readonly days: number;
}

/**
 * A backend's `history` option. Omitted or `true`: on, keeping `DEFAULT_RETENTION` (at least the
 * last 64 versions of every key and every version younger than 30 days, deleted keys included).
 * `{ versions, days }`: on, keeping that (each field defaults as above). `false`: off. Versions
 * never count against the entry limit and never show in `list()`.
 */
export type HistorySetting = boolean | { readonly versions?: number; readonly days?: number };

/** The options both backends take, with one meaning. */
export interface VersionedStoreOptions {
  /**
   * Enforce read-before-update: `update` writes only if the run's `Scope` holds the revision of
   * what the key holds now, else `StaleError`. Off, `update` replaces unconditionally and creates
   * a missing key. Default `true` on jetstream; `false` on the file backend (the seed's contract),
   * where several agents sharing one directory should turn it on in every process that opens it.
   */
  readonly readBeforeUpdate?: boolean | undefined;
  /**
   * Keep every write as a version (`history()`, `restoreVersion()`, `revertRun()`): in
   * `<dir>/.history/<key>/` on the file backend, in the bucket's history stream on jetstream
   * (which needs a bucket made by `agentmem bucket init` or `createJetStreamBucket`; opening one
   * that lacks what history needs says what is missing and the command that adds it). On by
   * default; see `HistorySetting` for what it keeps.
   */
  readonly history?: HistorySetting | undefined;
  /**
   * Hold writes for an operator's review instead of making them (`proposals()`,
   * `approveProposal()`, `rejectProposal()`): with `"tainted"`, every create, update and delete
   * made through a tainted `Scope`; with `"all"`, every write made through a `Scope`. Writes
   * without a scope (the CLI's, import's) always apply. A held write is validated as the write
   * would be, then kept where no read, list, note or search sees it; the call resolves normally.
   * Needs history. Default `false`.
   */
  readonly review?: ReviewMode | undefined;
}

/** Which writes a store holds for review: none, those of tainted runs, or every run's. */
export type ReviewMode = false | "tainted" | "all";

/**
 * A write held for an operator's review (store option `review`): what it would do, against which
 * version, and who asked. No `read`, `list`, system note or search shows it, and it never counts
 * against `MAX_ENTRIES`.
 */
export interface Proposal {
  /** Its id: 16 lowercase hexadecimal characters. */
  readonly id: string;
  /** The memory's key. */
  readonly key: string;
  /** What the write would do. */
  readonly op: "create" | "update" | "delete";
  /** The description it would write (absent for a delete; normalized as a write's). */
  readonly description?: string;
  /** The body it would write (absent for a delete, and once decided). */
  readonly content?: string;
  /**
   * The revision of the version it was made against (the key's newest when it was proposed);
   * absent for a create, and for an update of a key that held nothing (it would create it).
   */
  readonly base?: string;
  /** The run that proposed it (its `Scope`'s `run`). */
  readonly run?: string;
  /** The agent or user that run acts for, when the host named one. */
  readonly actor?: string;
  /** The path the write came by (`"memory_write"`, `"claude_memory:str_replace"`, ...). */
  readonly via: string;
  /** The model's tool call id, when it came from a tool call. */
  readonly callId?: string;
  /** Whether the proposing run had read untrusted input. */
  readonly tainted: boolean;
  /**
   * When it was proposed (ISO 8601 UTC, the proposing process's clock, strictly increasing
   * within a process, so its proposals list in the order they were made).
   */
  readonly at: string;
  /** The operator's decision, for a decided proposal (`proposals(store, { status })`). */
  readonly decision?: ProposalDecision;
}

/** What became of a proposal. */
export interface ProposalDecision {
  /** `"approved"`: it was written; `"rejected"`: it was not. */
  readonly outcome: "approved" | "rejected";
  /** When (ISO 8601 UTC, the deciding process's clock). */
  readonly at: string;
  /** Who decided: the actor of the operator's `Scope`, when it named one. */
  readonly actor?: string;
  /** The reason given with a rejection. */
  readonly reason?: string;
  /** The version an approval wrote (absent when a forced delete found nothing to delete). */
  readonly revision?: string;
  /** Whether it was approved with `force` over a key that had changed since. */
  readonly forced?: boolean;
}

/**
 * What `agentmem check` (and `auditStore`, `checkAnchor`) can find wrong in a key's history:
 *
 * - `edited`: a version's bytes do not match its hash, or a version sits out of its place;
 * - `missing`: a version its successor chains to is not there (cut from the middle);
 * - `truncated`: the oldest kept version chains to one no retention record explains;
 * - `rolled_back`: the memory holds an older version than versions written after it (or, with an
 *   anchor, older than the anchored one);
 * - `removed`: the memory (or its delete version) is gone without a delete version and a
 *   retention record explaining it; with an anchor, a whole anchored key that is gone;
 * - `rewritten`: with an anchor, the anchored version is no longer the one the chain holds;
 * - `unrecorded`: something was written around the library (a memory no version records, a raw
 *   write or delete without version headers);
 * - `damaged`: a record cannot be read;
 * - `foreign`: something the library never writes stands in the history (a stray file, a
 *   directory or symlink where a version belongs).
 */
export type HistoryProblemKind =
  | "edited"
  | "missing"
  | "truncated"
  | "rolled_back"
  | "removed"
  | "rewritten"
  | "unrecorded"
  | "damaged"
  | "foreign";

/** One problem found in a key's history. */
export interface HistoryProblem {
  /** The memory key (on jetstream, the key under the prefix the store was opened with). */
  readonly key: string;
  /** The version the problem is at, when there is one. */
  readonly revision?: string | undefined;
  /** What is wrong (see `HistoryProblemKind`). */
  readonly problem: HistoryProblemKind;
  /** The reason, in words, with what an operator may do. */
  readonly reason: string;
}

/**
 * A list read from a history, with what was skipped on the way: a damaged record, a stray file
 * or a forged message on one key never stops a read of the others. `problems` is not enumerable,
 * so the list compares and serializes as the plain array it is.
 */
export type VersionList = Version[] & { readonly problems: readonly HistoryProblem[] };

// The audit's data (store/audit.ts).

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
  /** What is wrong in the kept versions (see `HistoryProblemKind`), by key; none when empty. */
  readonly history?: readonly HistoryProblem[] | undefined;
  /** What the history cannot prove (versions of an older format, say), in words. */
  readonly notes?: readonly string[] | undefined;
  /**
   * Lock names that are not held by a live writer (file backend; absent elsewhere). A `"foreign"`
   * one is a problem an operator must fix; the others are for the record.
   */
  readonly locks?: readonly AuditLock[] | undefined;
}
