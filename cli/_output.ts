// Everything the CLI prints goes through here. Stored text is written by a model and may be
// hostile, so human output shows control characters, bidirectional controls and invisible format
// characters as visible escapes; JSON output escapes them too (it stays valid JSON that parses
// back to the exact text); `--raw` bytes are written untouched. Secrets never reach an error.
// Writes are synchronous, through node:fs, so output is complete before the process exits on
// Deno and Node alike.

import { writeSync } from "node:fs";

const ENCODER = new TextEncoder();

// Control characters, format characters (bidi controls, zero-width characters, the BOM, tag
// characters), line and paragraph separators, lone surrogates, and the supplementary variation
// selectors (invisible, used to smuggle text).
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u{E0100}-\u{E01EF}]/gu;
// What JSON.stringify leaves raw that a terminal or a reader could be fooled by: DEL and the C1
// controls, and the same format characters as above (as \uXXXX escapes, valid in JSON).
const UNSAFE_IN_JSON =
  /[\u007f-\u009f\u00ad\u061c\u070f\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\udc7f]|\udb40[\udd00-\uddef]/g;

function escapeCodePoint(ch: string): string {
  const cp = ch.codePointAt(0) as number;
  return cp <= 0xffff ? `\\u${cp.toString(16).padStart(4, "0")}` : `\\u{${cp.toString(16)}}`;
}

/** Text for a terminal: every unsafe character shown as a `\uXXXX` escape. One line. */
export function show(text: string): string {
  return text.replace(UNSAFE, escapeCodePoint);
}

/** A body for a terminal: like `show`, but line feeds and tabs stay as they are. */
export function showBody(text: string): string {
  return text.replace(UNSAFE, (ch) => (ch === "\n" || ch === "\t" ? ch : escapeCodePoint(ch)));
}

/** A value quoted for a message: JSON-quoted, escaped for a terminal, cut at 200 characters. */
export function quoted(text: string): string {
  const cut = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return show(JSON.stringify(cut));
}

/** JSON text that parses back to `value` exactly and carries no raw control or format character. */
export function safeJson(value: unknown): string {
  return JSON.stringify(value).replace(UNSAFE_IN_JSON, (s) => {
    let out = "";
    for (let i = 0; i < s.length; i++) out += `\\u${s.charCodeAt(i).toString(16).padStart(4, "0")}`;
    return out;
  });
}

/** `1 memory`, `2 memories`. */
export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

const secrets = new Set<string>();

/** Registers a secret (a password or token) that must never be printed in a message. */
export function addSecret(secret: string): void {
  if (secret !== "") secrets.add(secret);
}

/** `text` with every registered secret replaced by `***`. */
export function redact(text: string): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join("***");
  // A percent-encoded form of a secret, as it appears in a URL.
  for (const s of secrets) {
    const encoded = encodeURIComponent(s);
    if (encoded !== s) out = out.split(encoded).join("***");
  }
  return out;
}

const STDOUT = 1;
const STDERR = 2;
// Waits this long before writing again to a full non-blocking pipe.
const FULL_PIPE_WAIT_MS = 1;

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let off = 0; off < bytes.length;) {
    try {
      off += writeSync(fd, bytes.subarray(off));
    } catch (e) {
      // Node may hand us a non-blocking pipe: when it is full, wait for the reader.
      if ((e as { code?: unknown }).code !== "EAGAIN") throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, FULL_PIPE_WAIT_MS);
    }
  }
}

/** Writes a line of text to stdout. */
export function out(line: string): void {
  writeAll(STDOUT, ENCODER.encode(`${line}\n`));
}

/** Writes bytes to stdout, untouched. */
export function outBytes(bytes: Uint8Array): void {
  writeAll(STDOUT, bytes);
}

/** Writes a diagnostic line to stderr, prefixed `agentmem: `, escaped, with secrets redacted. */
export function err(line: string): void {
  writeAll(STDERR, ENCODER.encode(`agentmem: ${show(redact(line))}\n`));
}

/** Writes a JSON diagnostic to stderr, with secrets redacted. */
export function errJson(value: unknown): void {
  writeAll(STDERR, ENCODER.encode(`${redact(safeJson(value))}\n`));
}
