// Small text helpers shared by validation, serialization and error messages.

/** The number of UTF-8 bytes `s` encodes to; `s` must be well-formed. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * What kind of failure `e` is, for a message: its error code (`ENOENT`) or class name
 * (`TypeError`), never its text, which can hold host paths, addresses or secrets.
 */
export function errorKind(e: unknown): string {
  if (!(e instanceof Error)) return typeof e;
  const code = (e as { code?: unknown }).code;
  return typeof code === "string" ? code : e.name;
}

/** The number of Unicode code points in `s`. */
export function runeCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

const QUOTE_LIMIT = 64;
// What JSON.stringify leaves raw but a message must not carry: DEL and the C1 controls (U+009B
// starts a terminal escape sequence), line and paragraph separators, bidirectional formatting
// characters that reorder the text around them, and the invisible byte order mark.
const UNSAFE_IN_MESSAGE = /[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;

/**
 * A value quoted for an error message: JSON-escaped, so control characters, line breaks,
 * bidirectional controls and lone surrogates show as `\uXXXX` escapes, and cut short so a hostile
 * 10 MB key does not become a 10 MB message.
 */
export function quote(value: unknown): string {
  if (typeof value !== "string") return describeType(value);
  const cut = value.length > QUOTE_LIMIT ? value.slice(0, QUOTE_LIMIT) : value;
  const quoted = JSON.stringify(cut).replace(
    UNSAFE_IN_MESSAGE,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return value.length > QUOTE_LIMIT ? `${quoted.slice(0, -1)}…" (${value.length} chars)` : quoted;
}

/** A short name for a value's type, for "got X" in messages. */
export function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return "a string";
    case "number":
      return `the number ${value}`;
    case "boolean":
      return `the boolean ${value}`;
    case "undefined":
      return "nothing";
    case "object":
      return "an object";
    default:
      return `a ${typeof value}`;
  }
}
