/**
 * Typed errors. Callers branch on `instanceof` or on the stable `code`, never on message text.
 *
 * @module
 */

/** Every stable error code a store or the tools can report. */
export type MemoryErrorCode =
  | "invalid_key"
  | "invalid_description"
  | "invalid_content"
  | "too_large"
  | "capacity"
  | "exists"
  | "stale"
  | "not_found"
  | "corrupt"
  | "read_only"
  | "budget"
  | "config"
  | "unavailable";

/** Extra facts an error carries besides its message. */
export interface MemoryErrorOptions {
  /** The key the failed call was about, when there was one. */
  readonly key?: string | undefined;
  /** The underlying error, kept for operators; never shown to a model by the tools. */
  readonly cause?: unknown;
}

/** The base class of every error this library throws on purpose. */
export class MemoryError extends Error {
  /** A stable, machine-readable code. */
  readonly code: MemoryErrorCode;
  /** The key the failed call was about, when there was one. */
  readonly key: string | undefined;

  /**
   * Creates an error with a stable code.
   *
   * @param code The stable code.
   * @param message A sentence-case message naming the key and the limit broken.
   * @param options The key and the underlying cause.
   */
  constructor(code: MemoryErrorCode, message: string, options: MemoryErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "MemoryError";
    this.code = code;
    this.key = options.key;
  }
}

/** A key that is not a legal key (`invalid_key`). */
export class InvalidKeyError extends MemoryError {
  /**
   * Creates the error.
   * @param message What is wrong and what a legal key looks like.
   * @param options The key.
   */
  constructor(message: string, options?: MemoryErrorOptions) {
    super("invalid_key", message, options);
    this.name = "InvalidKeyError";
  }
}

/** A description that is too long or holds control characters (`invalid_description`). */
export class InvalidDescriptionError extends MemoryError {
  /**
   * Creates the error.
   * @param message What is wrong.
   * @param options The key.
   */
  constructor(message: string, options?: MemoryErrorOptions) {
    super("invalid_description", message, options);
    this.name = "InvalidDescriptionError";
  }
}

/** A body that is not a string of valid Unicode, such as one with a lone surrogate (`invalid_content`). */
export class InvalidContentError extends MemoryError {
  /**
   * Creates the error.
   * @param message What is wrong.
   * @param options The key.
   */
  constructor(message: string, options?: MemoryErrorOptions) {
    super("invalid_content", message, options);
    this.name = "InvalidContentError";
  }
}

/** A body over `MAX_CONTENT_BYTES` (`too_large`). */
export class TooLargeError extends MemoryError {
  /**
   * Creates the error.
   * @param message The size and the limit.
   * @param options The key.
   */
  constructor(message: string, options?: MemoryErrorOptions) {
    super("too_large", message, options);
    this.name = "TooLargeError";
  }
}

/** A create when the store already holds `MAX_ENTRIES` memories (`capacity`). */
export class CapacityError extends MemoryError {
  /**
   * Creates the error.
   * @param message The count and the limit.
   * @param options The key.
   */
  constructor(message: string, options?: MemoryErrorOptions) {
    super("capacity", message, options);
    this.name = "CapacityError";
  }
}

/** A create of a key that already holds a memory (`exists`). */
export class ExistsError extends MemoryError {
  /**
   * Creates the error.
   * @param message The key.
   * @param options The key.
   */
  constructor(message: string, options?: MemoryErrorOptions) {
    super("exists", message, options);
    this.name = "ExistsError";
  }
}

/** An update this run is not entitled to: never read, or changed since it was read (`stale`). */
export class StaleError extends MemoryError {
  /**
   * Creates the error.
   * @param message The key and why.
   * @param options The key.
   */
  constructor(message: string, options?: MemoryErrorOptions) {
    super("stale", message, options);
    this.name = "StaleError";
  }
}

/** A read of a key that holds nothing (`not_found`). */
export class NotFoundError extends MemoryError {
  /**
   * Creates the error.
   * @param message The key.
   * @param options The key.
   */
  constructor(message: string, options?: MemoryErrorOptions) {
    super("not_found", message, options);
    this.name = "NotFoundError";
  }
}

/** A stored entry that cannot be parsed or breaks the limits (`corrupt`). */
export class CorruptError extends MemoryError {
  /**
   * Creates the error.
   * @param message The key and what is wrong.
   * @param options The key.
   */
  constructor(message: string, options?: MemoryErrorOptions) {
    super("corrupt", message, options);
    this.name = "CorruptError";
  }
}

/** A write through a store opened read-only (`read_only`). */
export class ReadOnlyError extends MemoryError {
  /**
   * Creates the error.
   * @param message The refused operation.
   * @param options The key.
   */
  constructor(message: string, options?: MemoryErrorOptions) {
    super("read_only", message, options);
    this.name = "ReadOnlyError";
  }
}

/** What a run's budget counts: creates and updates are `"writes"`, deletes `"deletes"`. */
export type BudgetKind = "writes" | "deletes";

/** What a `BudgetError` carries besides the key and the cause. */
export interface BudgetErrorOptions extends MemoryErrorOptions {
  /** What ran out: `"writes"` or `"deletes"`. */
  readonly kind: BudgetKind;
  /** How many of them the run's budget allows. */
  readonly limit: number;
}

/**
 * A write refused because the run has used all its budget allows (`budget`): `new Scope({
 * budget: { writes, deletes } })`. Refused before any storage is touched; nothing was written.
 */
export class BudgetError extends MemoryError {
  /** What ran out: `"writes"` (creates and updates) or `"deletes"`. */
  readonly kind: BudgetKind;
  /** How many of them the run's budget allows. */
  readonly limit: number;

  /**
   * Creates the error.
   * @param message The call, and the budget it would break.
   * @param options What ran out, the budget's limit, the key.
   */
  constructor(message: string, options: BudgetErrorOptions) {
    super("budget", message, options);
    this.name = "BudgetError";
    this.kind = options.kind;
    this.limit = options.limit;
  }
}

/** Bad configuration, options or dependencies at construction (`config`). */
export class ConfigError extends MemoryError {
  /**
   * Creates the error.
   * @param message What is wrong and what is allowed.
   * @param options The cause.
   */
  constructor(message: string, options?: MemoryErrorOptions) {
    super("config", message, options);
    this.name = "ConfigError";
  }
}

/** Backend I/O failed, timed out or was aborted (`unavailable`). Retrying may succeed. */
export class UnavailableError extends MemoryError {
  /**
   * Creates the error.
   * @param message What failed.
   * @param options The key and the cause.
   */
  constructor(message: string, options?: MemoryErrorOptions) {
    super("unavailable", message, options);
    this.name = "UnavailableError";
  }
}
