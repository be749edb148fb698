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

/**
 * The longest line `import` reads: far more than any valid record takes, even with every
 * character of its body written as a `\uXXXX` escape (6 bytes for each byte of a 64 KiB body),
 * so a longer line is refused as too long without being read to its end.
 */
export const MAX_DUMP_LINE_BYTES = 1_048_576;
// What a dump's check keeps of its problems; past this many it only counts them.
const MAX_KEPT_PROBLEMS = 1_000;

/** What a dump holds, or what is wrong with it. */
export interface ParsedDump {
  readonly records: DumpRecord[];
  /** The first problems found, sorted by line (at most 1,000 are kept). */
  readonly problems: DumpProblem[];
  /** How many problems there are in all. */
  readonly problemCount: number;
  /** Entries the export left out, as its trailer says (0 without a trailer). */
  readonly skippedAtExport: number;
}

const FAILED: unique symbol = Symbol("failed");

// What `fn` returns, or FAILED when it throws.
function attempt<T>(fn: () => T): T | typeof FAILED {
  try {
    return fn();
  } catch {
    return FAILED;
  }
}

/** Parses and checks a whole dump held in memory; see `DumpParser`. */
export function parseDump(bytes: Uint8Array): ParsedDump {
  const parser = new DumpParser();
  let start = 0;
  while (start <= bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    parser.line(bytes.subarray(start, end));
    start = end + 1;
  }
  return parser.finish();
}

/**
 * Checks a dump line by line as it is read: every line, every record, duplicates and the count.
 * It holds at most one record more than a store can, and the first problems: a dump of any size
 * is checked in bounded memory.
 */
export class DumpParser {
  readonly #records: DumpRecord[] = [];
  readonly #problems: DumpProblem[] = [];
  readonly #seen = new Map<string, number>();
  #problemCount = 0;
  #n = 0;
  #values = 0;
  #header = false;
  #headerLine = 0;
  // With a header, the latest value waits here: the last one must be the trailer.
  #pending: { line: number; value: unknown } | undefined;
  #body = 0;
  #valid = 0;

  /** Checks the next line's bytes (without its newline). */
  line(raw: Uint8Array): void {
    const n = ++this.#n;
    const text = attempt(() => STRICT.decode(raw));
    if (text === FAILED) {
      return this.#problem(n, "not valid UTF-8 (invalid text is refused, never replaced)");
    }
    if (text.trim() === "") return;
    const value = attempt((): unknown => JSON.parse(text));
    if (value === FAILED) return this.#problem(n, "not a JSON value");
    if (this.#values++ === 0 && isMeta(value)) {
      this.#header = true;
      this.#headerLine = n;
      const header = value as Record<string, unknown>;
      if (header.format !== DUMP_FORMAT || header.end !== undefined) {
        this.#problem(n, `not an ${DUMP_FORMAT} header`);
      } else if (header.version !== DUMP_VERSION) {
        this.#problem(
          n,
          `dump version ${
            JSON.stringify(header.version)
          } is not supported; this CLI reads version ${DUMP_VERSION}`,
        );
      }
      return;
    }
    if (!this.#header) return this.#record(n, value);
    if (this.#pending !== undefined) this.#record(this.#pending.line, this.#pending.value);
    this.#pending = { line: n, value };
  }

  /** The verdict, once every line has been given. */
  finish(): ParsedDump {
    let expected: number | undefined;
    let skippedAtExport = 0;
    const last = this.#pending;
    if (this.#header) {
      if (last === undefined || !isMeta(last.value)) {
        if (last !== undefined) this.#record(last.line, last.value);
        this.#problem(
          (last?.line ?? this.#headerLine) + 1,
          "the dump ends without its trailer line, so it is truncated",
        );
      } else {
        const trailer = last.value as Record<string, unknown>;
        if (trailer.end !== true || !Number.isSafeInteger(trailer.records)) {
          this.#problem(last.line, "not a valid trailer line");
        } else {
          expected = trailer.records as number;
          skippedAtExport = Number.isSafeInteger(trailer.skipped) ? trailer.skipped as number : 0;
        }
      }
    }
    if (expected !== undefined && expected !== this.#body) {
      this.#problem(
        last?.line ?? 0,
        `the trailer counts ${expected} records but the dump holds ${this.#body}`,
      );
    }
    if (this.#valid > MAX_ENTRIES) {
      this.#problem(
        this.#records[MAX_ENTRIES]?.line ?? 0,
        `the dump holds ${this.#valid} records, over the limit of ${MAX_ENTRIES} memories`,
      );
    }
    this.#problems.sort((a, b) => a.line - b.line);
    return {
      records: this.#records,
      problems: this.#problems,
      problemCount: this.#problemCount,
      skippedAtExport,
    };
  }

  #record(line: number, value: unknown): void {
    this.#body++;
    const problem = recordProblem(value);
    if (problem !== undefined) return this.#problem(line, problem);
    const r = value as Record<string, unknown>;
    let valid;
    try {
      valid = validateWrite(r.key, r.description, r.content);
    } catch (e) {
      if (!(e instanceof MemoryError)) throw e;
      return this.#problem(line, e.message);
    }
    // Past one record more than a store holds, the dump is refused anyway: only count.
    if (this.#records.length > MAX_ENTRIES) {
      this.#valid++;
      return;
    }
    const earlier = this.#seen.get(valid.key);
    if (earlier !== undefined) {
      return this.#problem(
        line,
        `key "${valid.key}" already appears on line ${earlier}; a dump holds a key once`,
      );
    }
    this.#seen.set(valid.key, line);
    this.#records.push({ line, ...valid });
    this.#valid++;
  }

  #problem(line: number, message: string): void {
    if (this.#problemCount++ < MAX_KEPT_PROBLEMS) this.#problems.push({ line, message });
  }
}

function isMeta(v: unknown): boolean {
  return isObject(v) && Object.hasOwn(v, "format");
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
