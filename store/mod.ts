/**
 * The store's face: the `Store` contract and everything every backend shares: limits, errors, key
 * and write validation, the entry format, `Scope` (a run's read revisions and provenance), history
 * (versions, the audit log, restore and revert, anchors), strict option decoding and the backend
 * registry. The backends themselves open stores (`openFileStore`, `openJetStreamStore`).
 *
 * @example A run's scope: who it is, what it read, and a snapshot to resume it from
 * ```ts
 * import { InvalidKeyError, latestScope, Scope, validateKey } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * validateKey("user.name");
 * assert.throws(() => validateKey("../etc/passwd"), InvalidKeyError);
 *
 * const scope = new Scope({ run: "run-1", actor: "agent:travel" });
 * scope.taint(); // it read a web page: its writes are marked as coming from a tainted run
 * const journal: unknown[] = [{ t: "turn" }, scope.snapshot(), { t: "done" }];
 * const resumed = latestScope(journal);
 * assert.equal(resumed?.run, "run-1");
 * assert.equal(resumed?.tainted, true);
 * ```
 *
 * @module
 */

export type { CallOptions, Entry, Info, Item, Store } from "./types.ts";
export {
  MAX_CONTENT_BYTES,
  MAX_DESCRIPTION_RUNES,
  MAX_ENTRIES,
  MAX_ENTRY_BYTES,
  MAX_KEY_RUNES,
} from "./limits.ts";
export {
  BudgetError,
  type BudgetErrorOptions,
  type BudgetKind,
  CapacityError,
  ConfigError,
  CorruptError,
  ExistsError,
  InvalidContentError,
  InvalidDescriptionError,
  InvalidKeyError,
  MemoryError,
  type MemoryErrorCode,
  type MemoryErrorOptions,
  NotFoundError,
  ReadOnlyError,
  StaleError,
  TooLargeError,
  UnavailableError,
} from "./errors.ts";
export {
  checkCapacity,
  LEGAL_KEY,
  normalizeDescription,
  validateContent,
  validateKey,
  validateWrite,
  type ValidWrite,
} from "./validate.ts";
export { parseEntry, serializeEntry } from "./serialize.ts";
export {
  type Budget,
  type BudgetUsed,
  latestScope,
  PROVENANCE_ID,
  Scope,
  SCOPE_SNAPSHOT_KIND,
  SCOPE_SNAPSHOT_VERSION,
  type ScopeOptions,
  type ScopeSnapshot,
} from "./scope.ts";
export {
  type DecodedOptions,
  decodeOptions,
  type OptionSpec,
  type OptionsSchema,
  type OptionType,
  type OptionValue,
  type RequiredOptionKeys,
  type SpecValue,
} from "./options.ts";
export {
  type BackendDefinition,
  type OpenContext,
  openStore,
  registerBackend,
  registeredBackends,
  type StoreConfig,
  type StoreDeps,
} from "./registry.ts";
export { isReadOnly, readOnlyStore } from "./build.ts";
export type {
  AuditEntry,
  AuditLock,
  AuditLockState,
  AuditProblem,
  HistoryProblem,
  HistoryProblemKind,
  HistoryRetention,
  HistorySetting,
  Proposal,
  ProposalDecision,
  Redaction,
  ReviewMode,
  StoreAudit,
  Version,
  VersionedStoreOptions,
  VersionList,
} from "./types.ts";
export { DEFAULT_RETENTION } from "./retention.ts";
export {
  auditLog,
  type AuditLogFilter,
  history,
  listWithHeads,
  readVersion,
  restoreVersion,
} from "./history.ts";
export { type RevertAction, type RevertOptions, type RevertResult, revertRun } from "./revert.ts";
export {
  type Anchor,
  ANCHOR_KIND,
  type AnchorCheck,
  type AnchoredKey,
  checkAnchor,
  saveAnchor,
} from "./anchor.ts";
export { auditStore } from "./audit.ts";
export {
  type ApproveOptions,
  approveProposal,
  MAX_PENDING_PROPOSALS,
  type ProposalFilter,
  type ProposalList,
  proposals,
  type RejectOptions,
  rejectProposal,
} from "./review.ts";
export { purgeKey, type PurgeResult, type RedactOptions, redactVersion } from "./redact.ts";
