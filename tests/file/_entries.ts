// Self-checking entries for the cross-process tests: every (writer, seq, key, length) names
// exactly one description and one body, so a reader that sees anything else (a torn write, a
// mix of two versions, a body under another key's name) can tell.

import { mulberry32 } from "../_lib/rng.ts";

/** What one self-checking entry was written by, as named in its description. */
export interface Stamp {
  readonly writer: string;
  readonly seq: number;
  readonly key: string;
  readonly length: number;
}

// Mostly ASCII, with a 2-byte and a 3-byte character so a tear inside a multi-byte sequence
// shows as well. At most 3 bytes a character: keep `length` at or below 20,000.
const ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n\u00e9\u20ac";
const DESCRIPTION = /^entry (\S+)#(\d+) of (\S+): (\d+) chars, sum ([0-9a-f]{8})$/;

/** The longest `length` a stamp may carry and still fit the content limit. */
export const MAX_STAMP_LENGTH = 20_000;

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The one description and body a stamp names. */
export function stampedEntry(stamp: Stamp): { description: string; content: string } {
  const { writer, seq, key, length } = stamp;
  const rand = mulberry32(fnv1a(`${writer}/${seq}/${key}`));
  const chars: string[] = [];
  for (let i = 0; i < length; i++) chars.push(ALPHABET[Math.floor(rand() * ALPHABET.length)]!);
  const head = `writer=${writer} seq=${seq} key=${key} length=${length}\n`;
  const body = chars.join("");
  const sum = fnv1a(head + body).toString(16).padStart(8, "0");
  return {
    description: `entry ${writer}#${seq} of ${key}: ${length} chars, sum ${sum}`,
    content: `${head}${body}\nsum=${sum}\n`,
  };
}

/** The stamp a description names, or `undefined` when it names none. */
export function parseStamp(description: string): Stamp | undefined {
  const m = DESCRIPTION.exec(description);
  if (m === null) return undefined;
  return { writer: m[1]!, seq: Number(m[2]), key: m[3]!, length: Number(m[4]) };
}

/** What is wrong with a listed description of `key`, or `undefined` when it names a stamp of it. */
export function checkDescription(key: string, description: string): string | undefined {
  const stamp = parseStamp(description);
  if (stamp === undefined) return `description does not name a stamp: ${description}`;
  if (stamp.key !== key) return `description of ${stamp.key} listed under ${key}`;
  if (stampedEntry(stamp).description !== description) return `description mismatch under ${key}`;
  return undefined;
}

/**
 * Checks an entry read under `key`: its description names a stamp for `key`, and the body is
 * exactly the one that stamp names. Returns the stamp, or a string saying what is wrong.
 */
export function checkEntry(
  key: string,
  entry: { description: string; content: string },
): Stamp | string {
  const stamp = parseStamp(entry.description);
  if (stamp === undefined) return `description does not name a stamp: ${entry.description}`;
  if (stamp.key !== key) return `entry of ${stamp.key} found under ${key}`;
  const expected = stampedEntry(stamp);
  if (expected.description !== entry.description) return `description mismatch under ${key}`;
  if (expected.content !== entry.content) {
    return `body of ${stamp.writer}#${stamp.seq} under ${key} is torn or mixed (${entry.content.length} chars, expected ${expected.content.length})`;
  }
  return stamp;
}

/** A short, stable name for a stamp, for counting distinct versions. */
export function stampId(stamp: Stamp): string {
  return `${stamp.key}@${stamp.writer}#${stamp.seq}`;
}
