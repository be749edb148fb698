/**
 * The one entry format both backends store: a YAML header written by a real YAML library, then
 * the body verbatim.
 *
 * ```text
 * ---
 * description: "a: colon-bearing description"
 * ---
 * the body, byte for byte
 * ```
 *
 * @module
 */

import { stringify } from "yaml";
import { CorruptError } from "./errors.ts";
import { MAX_CONTENT_BYTES, MAX_ENTRY_BYTES } from "./limits.ts";
import type { Entry } from "./types.ts";
import { normalizeDescription, validateContent } from "./validate.ts";
import { quote, utf8Length } from "./text.ts";
import { parseYaml, readCanonicalHeader, writeCanonicalHeader } from "./yaml.ts";

const OPEN = "---\n";
const CLOSE = "\n---\n";
// lineWidth 0: never fold a long description over several lines, so the header stays one line
// and its size stays within the budget MAX_ENTRY_BYTES allows for it.
const YAML_OUT = { lineWidth: 0, minContentWidth: 0 } as const;

/**
 * The most bytes a header (everything before the body) of a valid entry can take.
 * `MAX_ENTRY_BYTES` minus the content cap.
 */
export const MAX_HEADER_BYTES: number = MAX_ENTRY_BYTES - MAX_CONTENT_BYTES;

/**
 * Serializes an entry: a YAML header holding the normalized description, then the body
 * verbatim. The description is normalized and the body checked first, so the result is exactly
 * what a backend stores and never larger than `MAX_ENTRY_BYTES`.
 *
 * @example Round trip
 * ```ts
 * import { parseEntry, serializeEntry } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const text = serializeEntry('say: "hi" - twice', "---\nbody\n");
 * assert.deepEqual(parseEntry(text), { description: 'say: "hi" - twice', content: "---\nbody\n" });
 * ```
 *
 * @param description The description (normalized before it is written).
 * @param content The body.
 * @returns The serialized entry.
 * @throws {InvalidDescriptionError | InvalidContentError | TooLargeError} on invalid input.
 */
export function serializeEntry(description: string, content: string): string {
  return serializeValid(normalizeDescription(description), validateContent(content));
}

/** Serializes an already-validated entry; backends call this after `validateWrite`. */
export function serializeValid(description: string, content: string): string {
  const header = writeCanonicalHeader(description) ?? stringify({ description }, YAML_OUT);
  return OPEN + header + "---\n" + content;
}

/**
 * Parses a stored entry. The header must open the text, hold a string `description`, and close
 * with a `---` line; the body after it is returned verbatim. The description is normalized and
 * both parts are held to the write limits, so a hand-edited entry cannot show the model more
 * than a valid write could.
 *
 * @param stored The serialized entry, as text or as UTF-8 bytes.
 * @param key The key it was stored under, for error messages.
 * @returns The entry.
 * @throws {CorruptError} when the text is not a valid entry.
 */
export function parseEntry(stored: string | Uint8Array, key?: string): Entry {
  if (typeof stored === "string") {
    const { description, bodyStart } = parseHeader(stored, key);
    const content = stored.slice(bodyStart);
    try {
      validateContent(content, key);
    } catch (e) {
      throw corrupt(key, e instanceof Error ? e.message : "invalid content");
    }
    return { description, content };
  }
  // Strict decoding guarantees well-formed text, so the body's size is simply the bytes after
  // the header: no second walk over 64 KiB of text.
  const text = decodeUtf8(stored, key);
  const { description, bodyStart, headerBytes } = parseHeader(text, key);
  const bodyBytes = stored.length - headerBytes;
  if (bodyBytes > MAX_CONTENT_BYTES) {
    throw corrupt(
      key,
      `its content has ${bodyBytes} bytes of UTF-8, over the limit of ${MAX_CONTENT_BYTES} bytes`,
    );
  }
  return { description, content: text.slice(bodyStart) };
}

/**
 * Parses only the header of a stored entry, for listing without reading bodies.
 *
 * @param text The start of a stored entry; must include the whole header.
 * @param key The key, for error messages.
 * @returns The normalized description and where the body starts.
 * @throws {CorruptError} when the header is missing, malformed or breaks the limits.
 */
export function parseHeader(
  text: string,
  key?: string,
): { description: string; bodyStart: number; headerBytes: number } {
  if (!text.startsWith(OPEN)) throw corrupt(key, 'it does not start with a "---" header line');
  let end = text.indexOf(CLOSE, OPEN.length - 1);
  let bodyStart = end + CLOSE.length;
  if (end < 0 && text.endsWith("\n---")) {
    end = text.length - 4;
    bodyStart = text.length;
  }
  const headerBytes = end < 0 ? Infinity : utf8Length(text.slice(0, bodyStart));
  if (headerBytes > MAX_HEADER_BYTES) {
    throw corrupt(key, `its header is not closed by a "---" line within ${MAX_HEADER_BYTES} bytes`);
  }
  const yaml = text.slice(OPEN.length, end + 1);
  let description = readCanonicalHeader(yaml);
  if (description === undefined) {
    const parsed = parseYaml(yaml);
    if (parsed === undefined) throw corrupt(key, "its header is not valid YAML");
    const header = parsed.value;
    const value = header !== null && typeof header === "object" && !Array.isArray(header)
      ? (header as Record<string, unknown>).description
      : undefined;
    if (typeof value !== "string") throw corrupt(key, "its header has no string description");
    description = value;
  }
  try {
    return { description: normalizeDescription(description, key), bodyStart, headerBytes };
  } catch (e) {
    throw corrupt(key, e instanceof Error ? e.message : "invalid description");
  }
}

const STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
// Replaces what is not UTF-8 with U+FFFD instead of failing, several times faster than the strict
// decoder on Deno: text without U+FFFD came from well-formed bytes, and text with one (rare: it
// may be the stored character itself) is decoded again strictly to tell.
const LENIENT = new TextDecoder("utf-8", { ignoreBOM: true });

function decodeUtf8(bytes: Uint8Array, key?: string): string {
  const text = LENIENT.decode(bytes);
  if (!text.includes("\uFFFD")) return text;
  try {
    return STRICT.decode(bytes);
  } catch {
    throw corrupt(key, "it is not valid UTF-8");
  }
}

/** Decodes stored bytes as strict UTF-8, failing with `CorruptError`. */
export { decodeUtf8 };

function corrupt(key: string | undefined, problem: string): CorruptError {
  const what = key === undefined ? "a stored memory" : `memory ${quote(key)}`;
  return new CorruptError(`Cannot parse ${what}: ${problem}`, { key });
}
