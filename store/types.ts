/**
 * The storage contract every backend implements.
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
