/**
 * The contract a backend implements: raw operations over one keyspace (`BackendOps`) and, with
 * history on, its versions and evidence (`HistoryOps`). `buildStore` (store/build.ts) wraps them
 * with validation before any I/O, abort checks, error normalization and spans, so a backend
 * implements only what touches its storage.
 *
 * @module
 */

import type {
  Entry,
  HistoryProblem,
  HistoryRetention,
  Info,
  Item,
  Proposal,
  Redaction,
  StoreAudit,
  Version,
} from "./types.ts";
import type { Scope } from "./scope.ts";
import type { ValidWrite } from "./validate.ts";

/**
 * A call's options after checking: the signal, the scope (`null` when none was given), and the
 * write's provenance (`via`, `"api"` by default, and the tool call id).
 */
export interface Call {
  readonly signal: AbortSignal | undefined;
  readonly scope: Scope | null;
  /**
   * `true` when the caller asked (see `checked.ts`) that this `update` or `delete` write only if
   * the key holds the revision `scope` recorded, else `StaleError`, whatever the backend's
   * read-before-update default. A delete of a key that holds nothing is then stale too.
   */
  readonly checked: boolean;
  readonly via: string;
  readonly callId: string | undefined;
}

/**
 * A backend's raw operations. Inputs are already validated; a backend throws `MemoryError`s for
 * the outcomes it knows and anything else becomes `UnavailableError`.
 */
export interface BackendOps {
  readonly info: Info;
  list(call: Call): Promise<Item[]>;
  read(key: string, call: Call): Promise<Entry>;
  create(write: ValidWrite, call: Call): Promise<void>;
  update(write: ValidWrite, call: Call): Promise<void>;
  delete(key: string, call: Call): Promise<boolean>;
  /**
   * Every name in the keyspace, including what `list()` hides, for an operator (`auditStore`).
   * Optional: without it, `auditStore` audits what `list()` and `read()` show.
   */
  audit?(call: Call): Promise<StoreAudit>;
  /**
   * Every memory `list()` shows, with its body, in key order, in one pass (what `read()` cannot
   * parse is left out). Optional: without it, `readAllEntries` lists and reads each key. Records
   * nothing in the call's scope: it serves a search, which grants no authority.
   */
  entries?(call: Call): Promise<KeyedEntry[]>;
  /** The store's history, when it keeps one. */
  readonly history?: HistoryOps | undefined;
  /** Records kept beside the memories, never listed or counted (store/sidecar.ts). Optional. */
  readonly sidecar?: SidecarOps | undefined;
}

/** A memory with its key: what `BackendOps.entries` yields. */
export interface KeyedEntry extends Entry {
  readonly key: string;
}

/** An entry and the version that wrote it, read together. */
export interface EntryVersion {
  readonly entry: Entry;
  /** `undefined` for an entry written with history off. */
  readonly version: Version | undefined;
}

/** What a history read found, and what it skipped on the way (damage stays local). */
export interface Listed<T> {
  readonly items: T[];
  readonly problems: HistoryProblem[];
}

/**
 * A backend's history, behind the exported functions (store/history.ts, store/revert.ts,
 * store/anchor.ts). Inputs arrive validated; the backend throws `MemoryError`s for outcomes it
 * knows. A damaged record, a stray file or a forged message on one key never fails a read of
 * other keys: it is skipped and reported in `problems`.
 */
export interface HistoryOps {
  /** The retention the store was opened with. */
  readonly retention: HistoryRetention;
  /** Every kept version of `key`, newest first; none when it has none. */
  versions(key: string, call: Call): Promise<Listed<Version>>;
  /** The entry a version wrote. `NotFoundError` for a delete and for an unknown revision. */
  readVersion(key: string, revision: string, call: Call): Promise<Entry>;
  /**
   * Every kept version of every key (or of `key`), oldest first in the backend's best order
   * across keys (the stream's on jetstream, time on the file backend). The caller puts each key's
   * versions in the order of its chain (by revision) within the places they hold, so a clock
   * never reorders one key's versions.
   */
  log(key: string | undefined, call: Call): Promise<Listed<Version>>;
  /**
   * What `list()` shows and, from the same pass, the newest version of each listed key (the
   * tools mark memories a tainted run wrote last, and a mark must be that of the entry listed).
   * A key whose entry carries no version record (written with history off) has none.
   */
  index(call: Call): Promise<{ readonly items: Item[]; readonly heads: Version[] }>;
  /**
   * What `read(key)` does, the revision it records in the call's scope included, and the version
   * record of the very bytes it read (`undefined` for an entry written with history off).
   */
  readLatest(key: string, call: Call): Promise<EntryVersion>;
  /**
   * Writes `write` (or deletes the key, when `null`) as a new version, only if the key's newest
   * version is still `expected` (its revision, or `null` for a key with no version at all);
   * otherwise `StaleError`, writing nothing. A write that re-creates a key is on the create path
   * (capacity applies). Returns the new version's revision.
   */
  commitIf(
    key: string,
    expected: string | null,
    write: ValidWrite | null,
    call: Call,
  ): Promise<string>;
  /**
   * The store's evidence, for `agentmem check` and anchors: every key's chain as it stands, and
   * what is wrong in it (every `HistoryProblemKind` that can be seen without an anchor).
   */
  evidence(call: Call): Promise<Evidence>;
  /** Where the store keeps writes held for review (store/review.ts), when it can keep them. */
  readonly review?: ReviewOps | undefined;
  /**
   * Removes the description and content of versions `revisions` of `key` from every copy the
   * backend keeps, leaving each one's place, provenance and hash in the chain, with the entry's
   * digest (so the chain still verifies) and `redaction`. The caller has checked that each is a
   * kept create or update, not the key's newest version, not redacted yet. With `orCut`, versions
   * that cannot stay verifiable without their bytes (chain format 1, which hashed the bytes; they
   * are the chain's oldest) are removed under a retention record instead; without it they are
   * refused.
   *
   * @throws {NotFoundError} for a version no longer kept (pruned meanwhile).
   * @throws {ConfigError} for a version in chain format 1, without `orCut`.
   * @throws {CorruptError} for a version whose bytes no longer match its hash.
   */
  redact?(
    key: string,
    o: {
      readonly revisions: readonly string[];
      readonly redaction: Redaction;
      readonly orCut?: boolean;
    },
    call: Call,
  ): Promise<void>;
}

/**
 * Who is deciding a proposal, for how long: an approver or rejecter claims it first, so of two
 * operators deciding at once exactly one does. A claim older than its lease may be taken over
 * (its holder died); the taker then checks whether the holder's write landed.
 */
export interface Claim {
  /** Names the claimer (random). */
  readonly token: string;
  /** When it was made, in milliseconds since the epoch (the claimer's clock). */
  readonly at: number;
  /** The key's newest version the claimer writes over (`null`: the key has none). */
  readonly expected: string | null;
  /** The claimer's actor, when its scope named one. */
  readonly actor?: string | undefined;
}

/** A pending proposal as a backend keeps it: with its body, and its claim while one is held. */
export interface HeldProposal {
  readonly proposal: Proposal;
  readonly claim?: Claim | undefined;
}

/** A key's newest version as a held write's look at the key sees it (`ReviewOps.head`). */
export interface Head {
  /** The `Scope` namespace its revision is recorded in. */
  readonly namespace: string;
  /** Its revision as a read records it in a `Scope`. */
  readonly revision: number;
  /** Its version's revision (a proposal's base); `undefined` when it has no version record. */
  readonly version: string | undefined;
}

/**
 * A backend's storage for writes held for review, beside (never inside) its keyspace and
 * history. The rules (what is held, validation, claims, expiry, the queue's limit) are
 * store/review.ts's; a backend keeps records and makes each state change atomic across
 * processes.
 */
export interface ReviewOps {
  /** Whether `update` is revision-checked for every call (option `readBeforeUpdate`). */
  readonly readBeforeUpdate: boolean;
  /** How many memories the store holds (at most; exact at `MAX_ENTRIES`), for a held create. */
  count(call: Call): Promise<number>;
  /**
   * Keeps `proposal` (with its body) as pending, unless `limit` proposals are pending already
   * (claimed ones included): then `false`, and nothing is kept. Proposals added at once may pass
   * the limit by their number, as creates pass `MAX_ENTRIES`.
   */
  add(proposal: Proposal, limit: number, call: Call): Promise<boolean>;
  /** Removes pending proposal `id`, which its own write's check refused (nothing else has it). */
  withdraw(id: string, call: Call): Promise<void>;
  /** Removes proposal `id`, pending or decided, whatever holds it (a purge of its key). */
  drop(id: string, call: Call): Promise<void>;
  /**
   * The revision of the version a write of `key` through `call` would be made against, when the
   * backend can tell without looking (the revision the run read, when revisions are versions);
   * `undefined` otherwise. Lets a held write send its proposal while the key is looked at.
   */
  baseHint?(key: string, call: Call): string | undefined;
  /**
   * The key's newest version as a read would see it, without reading its entry; `undefined` when
   * the key holds nothing. A held write looks at the key with it where the backend has it
   * (through `readLatest` otherwise).
   */
  head?(key: string, call: Call): Promise<Head | undefined>;
  /** Proposal `id` as pending (with its claim) or decided; `undefined` when there is none. */
  get(
    id: string,
    call: Call,
  ): Promise<{ readonly held: HeldProposal } | { readonly decided: Proposal } | undefined>;
  /**
   * Every pending proposal (with its claim) or every decided one (with its decision), in any
   * order. Records older than `before` (milliseconds since the epoch: a pending one by its `at`,
   * a decided one by its decision's) are removed on the way, where the store may write, and not
   * listed. What cannot be read is skipped and reported.
   */
  list(
    which: "pending" | "decided",
    before: number | undefined,
    call: Call,
  ): Promise<Listed<HeldProposal>>;
  /**
   * Claims pending proposal `id` for a decision. A claim made before `takeOverBefore` is taken
   * over. Returns the proposal and the claim taken over, if any.
   *
   * @throws {NotFoundError} when no pending proposal has the id, or another claim holds it.
   */
  claim(
    id: string,
    claim: Claim & { readonly takeOverBefore: number },
    call: Call,
  ): Promise<{ readonly proposal: Proposal; readonly previous: Claim | undefined }>;
  /** Gives `claim` back: the proposal is pending again. Nothing when the claim is gone. */
  release(id: string, claim: Claim, call: Call): Promise<void>;
  /**
   * Records `decided` (the proposal without its body, with its decision) and removes the pending
   * proposal, if `claim` still holds it; a decision already recorded for the id stands.
   */
  decide(id: string, claim: Claim, decided: Proposal, call: Call): Promise<void>;
}

/** What a backend's history proves about its keys (see `HistoryOps.evidence`). */
export interface Evidence {
  /**
   * The start of every chain name this evidence covers: `""` for all of them (the file backend, a
   * jetstream handle with prefix `""`), `"<prefix>."` for a jetstream handle with a prefix.
   */
  readonly within: string;
  /** Every key that has a history (a fully expired key with its retention record included). */
  readonly keys: KeyEvidence[];
  /** What is wrong, found without an anchor, by key. */
  readonly problems: HistoryProblem[];
  /**
   * What the evidence cannot prove, in words (versions written in an older format, say), for
   * `check` to print; none when empty.
   */
  readonly notes: string[];
}

/** One version's place in a key's chain: its revision and its hash. */
export interface ChainLink {
  readonly revision: string;
  readonly hash: string;
}

/** A key's chain, as the evidence holds it. */
export interface KeyEvidence {
  /** The key as the store's callers name it. */
  readonly key: string;
  /**
   * The name the chain covers, the same whatever handle reads it: the key on the file backend,
   * the bucket key (`<prefix>.<key>`) on jetstream. Anchors are kept by it.
   */
  readonly name: string;
  /** The newest committed version (a delete for a deleted key); none when all were cut. */
  readonly head: (ChainLink & { readonly op: Version["op"] }) | undefined;
  /** Every kept version, revision → hash. */
  readonly versions: ReadonlyMap<string, string>;
  /**
   * The retention record: every version at or below this revision was removed by retention,
   * the newest of them having this hash. None when nothing was cut.
   */
  readonly cut: ChainLink | undefined;
}

/** A change to one space: records to keep (replacing what their keys held) and keys to drop. */
export interface SidecarChange {
  readonly put: ReadonlyMap<string, Uint8Array>;
  readonly remove: readonly string[];
}

/** The sidecar a backend keeps (see `BackendOps.sidecar`). Keys arrive as legal memory keys. */
export interface SidecarOps {
  /** Every record kept in `space`, by key; none when the space holds nothing yet. */
  read(space: string, call: Call): Promise<Map<string, Uint8Array>>;
  /** Applies `change` to `space`, visible to every handle on the store once it resolves. */
  update(space: string, change: SidecarChange, call: Call): Promise<void>;
  /**
   * Drops `key`'s records from every space, leaving no copy of them in the backend's storage
   * (a redaction or purge calls it: a record is derived from the memory's text).
   */
  forget(key: string, call: Call): Promise<void>;
}
