/**
 * Validation that runs before any storage is touched: keys, descriptions, bodies and capacity.
 *
 * @module
 */

import {
  CapacityError,
  InvalidContentError,
  InvalidDescriptionError,
  InvalidKeyError,
  TooLargeError,
} from "./errors.ts";
import { MAX_CONTENT_BYTES, MAX_DESCRIPTION_RUNES, MAX_ENTRIES, MAX_KEY_RUNES } from "./limits.ts";
import { quote, runeCount, utf8Length } from "./text.ts";

const KEY_CHARSET = /^[A-Za-z0-9._=-]+$/;

/** The characters a key may hold, as a JSON Schema `pattern` (the other rules are checked apart). */
export const KEY_PATTERN: string = KEY_CHARSET.source;

/** What a legal key looks like, for error messages and tool descriptions. */
export const LEGAL_KEY =
  `1 to ${MAX_KEY_RUNES} characters from A-Z a-z 0-9 . _ = -, not starting or ending with "." and without ".."`;

/**
 * Checks that `key` is a legal key: 1 to 200 characters matching `^[A-Za-z0-9._=-]+$`, no
 * leading or trailing dot and no `..`. Legal keys are exactly the names that are both NATS KV
 * keys and safe flat file names.
 *
 * @example Refusing a path
 * ```ts
 * import { InvalidKeyError, validateKey } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * validateKey("user.preferences");
 * assert.throws(() => validateKey("../etc/passwd"), InvalidKeyError);
 * ```
 *
 * @param key The candidate key.
 * @returns The key, unchanged.
 * @throws {InvalidKeyError} naming the key, what is wrong and what a legal key looks like.
 */
export function validateKey(key: unknown): string {
  const problem = keyProblem(key);
  if (problem !== undefined) {
    throw new InvalidKeyError(
      `Invalid memory key ${quote(key)}: ${problem}; a key is ${LEGAL_KEY}`,
      {
        key: typeof key === "string" ? key : undefined,
      },
    );
  }
  return key as string;
}

function keyProblem(key: unknown): string | undefined {
  if (typeof key !== "string") return "it is not a string";
  if (key.length === 0) return "it is empty";
  if (key.length > MAX_KEY_RUNES) {
    return `it has ${runeCount(key)} characters, over the limit of ${MAX_KEY_RUNES}`;
  }
  if (!KEY_CHARSET.test(key)) {
    const bad = [...key].find((ch) => !KEY_CHARSET.test(ch)) ?? "";
    return `it contains ${quote(bad)}`;
  }
  if (key.startsWith(".")) return 'it starts with "."';
  if (key.endsWith(".")) return 'it ends with "."';
  if (key.includes("..")) return 'it contains ".."';
  return undefined;
}

// Line breaks and other white space, folded to one space. U+0085 (NEXT LINE) is a line break
// that JavaScript's \s does not cover.
const FOLDABLE = /[\s\u0085]+/gu;
// C0 and C1 control characters left after folding.
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;

/**
 * Normalizes a description the way every backend persists it: Unicode NFC, then runs of white
 * space and line breaks folded to one space, then trimmed.
 *
 * @param description The raw description.
 * @param key The key it belongs to, for the error message.
 * @returns The normalized description.
 * @throws {InvalidDescriptionError} when it is not a string, holds a lone surrogate or a control
 * character, or is longer than `MAX_DESCRIPTION_RUNES` after normalization.
 */
export function normalizeDescription(description: unknown, key?: string): string {
  const fail = (problem: string) =>
    new InvalidDescriptionError(
      `Invalid description${
        where(key)
      }: ${problem}; a description is one line of at most ${MAX_DESCRIPTION_RUNES} characters without control characters`,
      { key },
    );
  if (typeof description !== "string") throw fail(`it is ${quote(description)}, not a string`);
  if (!description.isWellFormed()) throw fail("it contains a lone surrogate (invalid Unicode)");
  const normalized = description.normalize("NFC").replace(FOLDABLE, " ").trim();
  const control = CONTROL.exec(normalized);
  if (control) throw fail(`it contains the control character ${quote(control[0])}`);
  const runes = runeCount(normalized);
  if (runes > MAX_DESCRIPTION_RUNES) {
    throw fail(`it has ${runes} characters, over the limit of ${MAX_DESCRIPTION_RUNES}`);
  }
  return normalized;
}

/**
 * Checks a body: a string of well-formed Unicode of at most `MAX_CONTENT_BYTES` UTF-8 bytes.
 *
 * @param content The body.
 * @param key The key it belongs to, for the error message.
 * @returns The body, unchanged.
 * @throws {InvalidContentError} when it is not a string or holds a lone surrogate.
 * @throws {TooLargeError} when it is over the size limit.
 */
export function validateContent(content: unknown, key?: string): string {
  if (typeof content !== "string") {
    throw new InvalidContentError(
      `Invalid content${where(key)}: it is ${quote(content)}, not a string`,
      {
        key,
      },
    );
  }
  if (!content.isWellFormed()) {
    throw new InvalidContentError(
      `Invalid content${
        where(key)
      }: it contains a lone surrogate; content must be valid Unicode text`,
      { key },
    );
  }
  // A UTF-8 byte never encodes to fewer than a third of a UTF-16 unit, so short strings skip
  // the exact count.
  if (content.length * 3 > MAX_CONTENT_BYTES) {
    const bytes = utf8Length(content);
    if (bytes > MAX_CONTENT_BYTES) {
      throw new TooLargeError(
        `Content${
          where(key)
        } is too large: ${bytes} bytes of UTF-8, over the limit of ${MAX_CONTENT_BYTES} bytes (64 KiB)`,
        { key },
      );
    }
  }
  return content;
}

// " of memory "k"" for messages, built only when a message is.
function where(key: string | undefined): string {
  return key === undefined ? "" : ` of memory ${quote(key)}`;
}

/** A write that passed validation: the key, the normalized description and the body. */
export interface ValidWrite {
  /** The legal key. */
  readonly key: string;
  /** The normalized description; this, not the raw one, is persisted. */
  readonly description: string;
  /** The body, unchanged. */
  readonly content: string;
}

/**
 * Validates a write before any storage is touched: the key, the description (normalized) and
 * the body. Every backend calls it first.
 *
 * @example Normalizing a description
 * ```ts
 * import { validateWrite } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const w = validateWrite("todo", "  buy\n milk  ", "2 litres");
 * assert.equal(w.description, "buy milk");
 * ```
 *
 * @param key The key.
 * @param description The raw description.
 * @param content The body.
 * @returns The validated write, with the normalized description.
 * @throws {InvalidKeyError | InvalidDescriptionError | InvalidContentError | TooLargeError}
 */
export function validateWrite(key: unknown, description: unknown, content: unknown): ValidWrite {
  const k = validateKey(key);
  return {
    key: k,
    description: normalizeDescription(description, k),
    content: validateContent(content, k),
  };
}

/**
 * Refuses a create when the store already holds `MAX_ENTRIES` memories. Runs on the create path
 * only: an overwrite replaces an entry that already counted.
 *
 * @param count How many memories the store holds now.
 * @param key The key being created, for the message.
 * @throws {CapacityError} when `count` has reached the limit.
 */
export function checkCapacity(count: number, key?: string): void {
  if (count >= MAX_ENTRIES) {
    const what = key === undefined ? "a memory" : `memory ${quote(key)}`;
    throw new CapacityError(
      `Cannot create ${what}: the store holds ${count} memories, the limit is ${MAX_ENTRIES}; delete one first`,
      { key },
    );
  }
}
