/**
 * agentmem: a durable memory for LLM agent harnesses. The model writes a note under a key and
 * reads it back on a later run; the harness stores that text, shows it back, and never treats
 * it as an instruction.
 *
 * Two backends ship: **file** (a directory, atomic writes, no server) and **jetstream** (a NATS
 * JetStream KV bucket shared by many processes and machines).
 *
 * @example Remember something across runs
 * ```ts
 * import { ExistsError, openFileStore } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const store = await openFileStore({ dir });
 * await store.create("user.name", "What the user wants to be called", "Sam");
 * await assert.rejects(store.create("user.name", "again", "Samuel"), ExistsError);
 * assert.deepEqual(await store.list(), [
 *   { key: "user.name", description: "What the user wants to be called" },
 * ]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */

export type { CallOptions, Entry, Info, Item, Store } from "./store/types.ts";
export {
  MAX_CONTENT_BYTES,
  MAX_DESCRIPTION_RUNES,
  MAX_ENTRIES,
  MAX_ENTRY_BYTES,
  MAX_KEY_RUNES,
} from "./store/limits.ts";
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
} from "./store/errors.ts";
export {
  checkCapacity,
  LEGAL_KEY,
  normalizeDescription,
  validateContent,
  validateKey,
  validateWrite,
  type ValidWrite,
} from "./store/validate.ts";
export { parseEntry, serializeEntry } from "./store/serialize.ts";
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
} from "./store/scope.ts";
export {
  type DecodedOptions,
  decodeOptions,
  type OptionSpec,
  type OptionsSchema,
  type OptionType,
  type OptionValue,
  type RequiredOptionKeys,
  type SpecValue,
} from "./store/options.ts";
export {
  type BackendDefinition,
  type OpenContext,
  openStore,
  registerBackend,
  registeredBackends,
  type StoreConfig,
  type StoreDeps,
} from "./store/registry.ts";
export { isReadOnly, readOnlyStore } from "./store/_store.ts";
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
  ReviewMode,
  StoreAudit,
  Version,
  VersionedStoreOptions,
  VersionList,
} from "./store/types.ts";
export { DEFAULT_RETENTION } from "./store/retention.ts";
export {
  auditLog,
  type AuditLogFilter,
  history,
  listWithHeads,
  readVersion,
  restoreVersion,
} from "./store/history.ts";
export {
  type RevertAction,
  type RevertOptions,
  type RevertResult,
  revertRun,
} from "./store/revert.ts";
export {
  type Anchor,
  ANCHOR_KIND,
  type AnchorCheck,
  type AnchoredKey,
  checkAnchor,
  saveAnchor,
} from "./store/anchor.ts";
export { auditStore } from "./store/audit.ts";
export {
  type ApproveOptions,
  approveProposal,
  MAX_PENDING_PROPOSALS,
  type ProposalFilter,
  type ProposalList,
  proposals,
  type RejectOptions,
  rejectProposal,
} from "./store/review.ts";
export { type FileStoreOptions, openFileStore } from "./backends/file.ts";
export {
  defineTool,
  type ExposeSpec,
  type JsonSchemaObject,
  type Tool,
  type ToolInputSchema,
  type ToolResult,
  type ToolRunOptions,
  type ToolSpec,
} from "./tools/tool.ts";
export {
  DEFAULT_LIST_CHARS,
  memoryTools,
  type MemoryToolsOptions,
  MIN_LIST_CHARS,
} from "./tools/memory_tools.ts";
export {
  DEFAULT_NOTE_CHARS,
  memorySystemNote,
  type SystemNoteOptions,
} from "./tools/system_note.ts";
export {
  type AnthropicRunnableTool,
  type AnthropicRunnableToolsOptions,
  type AnthropicTool,
  type AnthropicToolRunContext,
  toAnthropicRunnableTools,
  toAnthropicTools,
} from "./tools/anthropic.ts";
export {
  type OpenAIFunction,
  type OpenAIResponsesTool,
  type OpenAITool,
  type OpenAIToolsOptions,
  toOpenAITools,
} from "./tools/openai.ts";
export { runTool } from "./tools/run_tool.ts";
export { type SearchMatch, searchMemories, type SearchResult } from "./tools/search.ts";
export {
  type AnthropicMemoryHandlers,
  anthropicMemoryHandlers,
  type AnthropicMemoryHandlersOptions,
  type MemoryCreateCommand,
  type MemoryDeleteCommand,
  type MemoryInsertCommand,
  type MemoryRenameCommand,
  type MemoryStrReplaceCommand,
  type MemoryViewCommand,
} from "./tools/claude_memory/handlers.ts";
export { claudeMemoryKey, claudeMemoryPath } from "./tools/claude_memory/paths.ts";
export {
  type AISDKModelOutput,
  type AISDKTool,
  type AISDKToolsOptions,
  toAISDKTools,
} from "./tools/ai_sdk.ts";
export {
  createJetStreamBucket,
  JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  JETSTREAM_MIN_VALUE_SIZE,
  jetStreamBucketCommand,
  type JetStreamBucketSettings,
  type JetStreamDeps,
  type JetStreamStoreOptions,
  type NatsConnectionLike,
  openJetStreamStore,
} from "./backends/jetstream.ts";
