// The dump format `export` writes and `import` reads: JSON lines, versioned, with a trailer that
// counts the records so a truncated dump is refused.
//
//   {"format":"agentmem-dump","version":1}
//   {"key":"user.name","description":"What the user wants to be called","content":"Sam"}
//   {"format":"agentmem-dump","end":true,"records":1,"skipped":0}
//
// `import` also takes bare record lines with no header and no trailer, for hand-written input.

import { MAX_ENTRIES, MemoryError, validateWrite } from "../mod.ts";
import type { Entry } from "../mod.ts";
import { safeJson } from "./_output.ts";

/** The `format` value of a dump's header and trailer. */
export const DUMP_FORMAT = "agentmem-dump";
/** The dump version this CLI writes and reads. */
export const DUMP_VERSION = 1;

const RECORD_FIELDS = ["key", "description", "content"];
const STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The header line. */
export function dumpHeader(): string {
  return safeJson({ format: DUMP_FORMAT, version: DUMP_VERSION });
}

/** One memory's line. */
export function dumpRecord(key: string, entry: Entry): string {
  return safeJson({ key, description: entry.description, content: entry.content });
}

/** The trailer line: how many records the dump holds and how many entries were left out. */
export function dumpTrailer(records: number, skipped: number): string {
  return safeJson({ format: DUMP_FORMAT, end: true, records, skipped });
}

/** A valid record, its description normalized as the store will persist it. */
export interface DumpRecord {
  readonly line: number;
  readonly key: string;
  readonly description: string;
  readonly content: string;
}

/** A bad line and why. */
export interface DumpProblem {
  readonly line: number;
  readonly message: string;
}

/** What a dump holds, or what is wrong with it. */
export interface ParsedDump {
  readonly records: DumpRecord[];
  readonly problems: DumpProblem[];
  /** Entries the export left out, as its trailer says (0 without a trailer). */
  readonly skippedAtExport: number;
}

/** Parses and checks a whole dump: every line, every record, duplicates and the count. */
export function parseDump(bytes: Uint8Array): ParsedDump {
  const lines: Array<{ line: number; value: unknown }> = [];
  const problems: DumpProblem[] = [];
  let start = 0;
  for (let n = 1; start <= bytes.length; n++) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    const raw = bytes.subarray(start, end);
    start = end + 1;
    let text: string;
    try {
      text = STRICT.decode(raw);
    } catch {
      problems.push({
        line: n,
        message: "not valid UTF-8 (invalid text is refused, never replaced)",
      });
      continue;
    }
    if (text.trim() === "") continue;
    try {
      lines.push({ line: n, value: JSON.parse(text) });
    } catch {
      problems.push({ line: n, message: "not a JSON value" });
    }
  }
  const isMeta = (v: unknown) => isObject(v) && Object.hasOwn(v, "format");
  const first = lines[0];
  let body = lines;
  let expected: number | undefined;
  let skippedAtExport = 0;
  if (first !== undefined && isMeta(first.value)) {
    const header = first.value as Record<string, unknown>;
    body = lines.slice(1);
    if (header.format !== DUMP_FORMAT || header.end !== undefined) {
      problems.push({ line: first.line, message: `not an ${DUMP_FORMAT} header` });
    } else if (header.version !== DUMP_VERSION) {
      problems.push({
        line: first.line,
        message: `dump version ${
          JSON.stringify(header.version)
        } is not supported; this CLI reads version ${DUMP_VERSION}`,
      });
    }
    const last = body.at(-1);
    if (last === undefined || !isMeta(last.value)) {
      problems.push({
        line: (last?.line ?? first.line) + 1,
        message: "the dump ends without its trailer line, so it is truncated",
      });
    } else {
      body = body.slice(0, -1);
      const trailer = last.value as Record<string, unknown>;
      if (trailer.end !== true || !Number.isSafeInteger(trailer.records)) {
        problems.push({ line: last.line, message: "not a valid trailer line" });
      } else {
        expected = trailer.records as number;
        skippedAtExport = Number.isSafeInteger(trailer.skipped) ? trailer.skipped as number : 0;
      }
    }
  }
  const records: DumpRecord[] = [];
  const seen = new Map<string, number>();
  for (const { line, value } of body) {
    const problem = recordProblem(value);
    if (problem !== undefined) {
      problems.push({ line, message: problem });
      continue;
    }
    const r = value as Record<string, unknown>;
    let valid;
    try {
      valid = validateWrite(r.key, r.description, r.content);
    } catch (e) {
      if (!(e instanceof MemoryError)) throw e;
      problems.push({ line, message: e.message });
      continue;
    }
    const earlier = seen.get(valid.key);
    if (earlier !== undefined) {
      problems.push({
        line,
        message: `key "${valid.key}" already appears on line ${earlier}; a dump holds a key once`,
      });
      continue;
    }
    seen.set(valid.key, line);
    records.push({ line, ...valid });
  }
  const count = body.length;
  if (expected !== undefined && expected !== count) {
    problems.push({
      line: lines.at(-1)?.line ?? 0,
      message: `the trailer counts ${expected} records but the dump holds ${count}`,
    });
  }
  if (records.length > MAX_ENTRIES) {
    problems.push({
      line: records[MAX_ENTRIES]?.line ?? 0,
      message:
        `the dump holds ${records.length} records, over the limit of ${MAX_ENTRIES} memories`,
    });
  }
  problems.sort((a, b) => a.line - b.line);
  return { records, problems, skippedAtExport };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function recordProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "a record must be a JSON object";
  if (Object.hasOwn(value, "format")) return "a header or trailer line in the middle of the dump";
  const extra = Object.keys(value).find((k) => !RECORD_FIELDS.includes(k));
  if (extra !== undefined) {
    return `unknown field ${
      JSON.stringify(extra.slice(0, 64))
    }; a record has "key", "description" and "content"`;
  }
  const missing = RECORD_FIELDS.find((k) => !Object.hasOwn(value, k));
  if (missing !== undefined) return `the record has no "${missing}"`;
  return undefined;
}
