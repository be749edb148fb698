// `import`: check the whole dump first and write nothing if any record is bad; then plan each key
// against the store (create, unchanged, skip or replace), check capacity, and write. A failure
// mid-way says exactly which keys landed.

import {
  type AuditEntry,
  auditStore,
  ExistsError,
  MAX_ENTRIES,
  MemoryError,
  NotFoundError,
  type Store,
} from "../mod.ts";
import { writeOne } from "./_commands.ts";
import { DumpParser, type DumpRecord, MAX_DUMP_LINE_BYTES, type ParsedDump } from "./_dump.ts";
import { LineTooLongError, openInput, readLines, stdinChunks } from "./_input.ts";
import type { Opened } from "./_open.ts";
import { err, out, plural, safeJson } from "./_output.ts";
import type { Command } from "./_spec.ts";

/** The option values `import` reads. */
export interface ImportOptions {
  readonly json: boolean;
  readonly overwrite: boolean;
  readonly dryRun: boolean;
}

type Action = "create" | "replace" | "unchanged" | "skip";

interface Step {
  readonly record: DumpRecord;
  readonly action: Action;
  readonly reason?: string;
}

const SHOWN_PROBLEMS = 50;

export const importCommand: Command = {
  name: "import",
  summary: "load a dump (a file, or standard input); nothing is written if any record is bad",
  about:
    "The whole input is checked first (JSON, UTF-8, keys, limits, duplicate keys, capacity). A key that already holds different content is skipped and named (exit 1), or replaced with --overwrite; --dry-run says what would happen and writes nothing.",
  args: [{ name: "file", optional: true }],
  options: {
    overwrite: { kind: "boolean", help: "replace memories that hold different content" },
    "dry-run": { kind: "boolean", help: "say what would happen, write nothing" },
  },
  reach: "store",
  creates: true,
  writes: "unless-dry-run",
  examples: ["agentmem import dump.jsonl --dry-run --dir ./.agentmem"],
  alias: ["load"],
  run: (ctx) =>
    importDump(() => ctx.flag("dry-run") ? ctx.openOrEmpty() : ctx.open(), {
      source: ctx.args[0],
      json: ctx.json,
      overwrite: ctx.flag("overwrite"),
      dryRun: ctx.flag("dry-run"),
    }),
};

/**
 * Runs `import` from `source` (a path) or standard input. The store is opened only once the whole
 * input has passed its checks, so bad input leaves even a missing directory uncreated.
 */
async function importDump(
  openStore: () => Promise<Opened>,
  o: ImportOptions & { readonly source: string | undefined },
): Promise<number> {
  const { source } = o;
  const input = source === undefined
    ? stdinChunks()
    : await openInput(source, "the file to import");
  const parser = new DumpParser();
  try {
    for await (const line of readLines(input, MAX_DUMP_LINE_BYTES)) parser.line(line);
  } catch (e) {
    if (!(e instanceof LineTooLongError)) throw e;
    const message = `longer than ${e.limit} bytes, more than any record takes`;
    return refuse(o, [{ line: e.line, message }], "a line too long", 1);
  }
  const dump = parser.finish();
  if (dump.problemCount > 0) {
    return refuse(
      o,
      dump.problems,
      `${plural(dump.problemCount, "bad line", "bad lines")}`,
      dump.problemCount,
    );
  }
  // Closed by the CLI once the command is done.
  return await importRecords(await openStore(), dump, o);
}

async function importRecords(opened: Opened, dump: ParsedDump, o: ImportOptions): Promise<number> {
  if (dump.skippedAtExport > 0 && !o.json) {
    err(
      `note: the export that wrote this dump left out ${
        plural(dump.skippedAtExport, "damaged entry", "damaged entries")
      }`,
    );
  }

  if (opened.store === undefined && !o.json) {
    err("note: the memory directory does not exist yet; the import will create it");
  }
  const audit = opened.store === undefined
    ? { entries: [], ignored: [] }
    : await auditStore(opened.store);
  const existing = new Map<string, AuditEntry>();
  for (const e of audit.entries) if (e.key !== undefined) existing.set(e.key, e);
  const plan: Step[] = dump.records.map((record) => planOne(record, existing.get(record.key), o));
  const creates = plan.filter((s) => s.action === "create").length;
  if (existing.size + creates > MAX_ENTRIES) {
    return refuse(o, [{
      line: 0,
      message: `the store holds ${
        plural(existing.size, "memory", "memories")
      } and the dump would add ${creates}, over the limit of ${MAX_ENTRIES}`,
    }], "capacity");
  }

  const done: Record<Action, string[]> = { create: [], replace: [], unchanged: [], skip: [] };
  const skipped: Array<{ key: string; reason: string }> = [];
  let failed: { line: number; key: string; error: string; message: string } | undefined;
  const uncertain: string[] = [];
  const notWritten: string[] = [];
  for (const step of plan) {
    const { key } = step.record;
    if (failed !== undefined) {
      if (step.action === "create" || step.action === "replace") notWritten.push(key);
      continue;
    }
    if (step.action === "unchanged") {
      done.unchanged.push(key);
      continue;
    }
    if (step.action === "skip") {
      skipped.push({ key, reason: step.reason ?? "" });
      continue;
    }
    // A dry run, or one into a directory that does not exist yet (only dry runs open those).
    if (o.dryRun || opened.store === undefined) {
      done[step.action].push(key);
      continue;
    }
    const { description, content } = step.record;
    try {
      await writeOne(opened.store, {
        key,
        description,
        content,
        overwrite: step.action === "replace",
        via: "import",
      });
      done[step.action].push(key);
    } catch (e) {
      if (!(e instanceof MemoryError)) throw e;
      if (e instanceof ExistsError && step.action === "create") {
        skipped.push({ key, reason: "another writer created it after the check" });
        continue;
      }
      failed = { line: step.record.line, key, error: e.code, message: e.message };
      // Whether the failed write landed after all: read it back when the store still answers.
      const landed = await landedAs(opened.store, step.record);
      if (landed === true) done[step.action].push(key);
      else if (landed === false) notWritten.push(key);
      else uncertain.push(key);
    }
  }
  skipped.forEach((s) => done.skip.push(s.key));

  if (o.json) {
    out(safeJson({
      dryRun: o.dryRun,
      created: done.create,
      replaced: done.replace,
      unchanged: done.unchanged,
      skipped,
      failed: failed ?? null,
      uncertain,
      notWritten,
    }));
  } else {
    const verb = (past: string, future: string) => o.dryRun ? `would ${future}` : past;
    for (const step of plan) {
      const k = step.record.key;
      if (done.create.includes(k)) out(`${verb("created", "create")} ${k}`);
      else if (done.replace.includes(k)) out(`${verb("replaced", "replace")} ${k}`);
      else if (done.unchanged.includes(k)) out(`unchanged ${k} (identical)`);
    }
    for (const s of skipped) out(`skipped ${s.key}: ${s.reason}`);
    out(
      `${o.dryRun ? "dry run, nothing written: would import" : "imported"}: ${done.create.length} ${
        o.dryRun ? "to create" : "created"
      }, ${done.replace.length} ${
        o.dryRun ? "to replace" : "replaced"
      }, ${done.unchanged.length} unchanged, ${skipped.length} skipped`,
    );
    if (failed !== undefined) {
      err(`import stopped at line ${failed.line}, key "${failed.key}": ${failed.message}`);
      const landed = [...done.create, ...done.replace];
      err(`landed before the failure (${landed.length}): ${landed.join(", ") || "none"}`);
      if (uncertain.length > 0) {
        err(`may or may not have landed (${uncertain.length}): ${uncertain.join(", ")}`);
      }
      err(`not written (${notWritten.length}): ${notWritten.join(", ") || "none"}`);
    }
  }
  return failed !== undefined || skipped.length > 0 ? 1 : 0;
}

function planOne(record: DumpRecord, found: AuditEntry | undefined, o: ImportOptions): Step {
  if (found === undefined) return { record, action: "create" };
  const entry = found.entry;
  if (
    entry !== undefined && entry.description === record.description &&
    entry.content === record.content
  ) {
    return { record, action: "unchanged" };
  }
  if (o.overwrite) return { record, action: "replace" };
  return {
    record,
    action: "skip",
    reason: entry === undefined
      ? "the stored entry is damaged; --overwrite replaces it"
      : "it holds a different memory; --overwrite replaces it",
  };
}

// Whether a write that reported failure is in the store: true, false, or undefined (unknown).
async function landedAs(store: Store, r: DumpRecord): Promise<boolean | undefined> {
  try {
    const now = await store.read(r.key);
    return now.description === r.description && now.content === r.content;
  } catch (e) {
    return e instanceof NotFoundError ? false : undefined;
  }
}

// `count`: how many problems there are in all (`problems` may hold only the first of them).
function refuse(
  o: ImportOptions,
  problems: ReadonlyArray<{ line: number; message: string }>,
  what: string,
  count = problems.length,
): number {
  if (o.json) out(safeJson({ written: false, problems }));
  else {
    for (const p of problems.slice(0, SHOWN_PROBLEMS)) {
      err(p.line > 0 ? `line ${p.line}: ${p.message}` : p.message);
    }
    if (count > SHOWN_PROBLEMS) {
      err(`… and ${count - SHOWN_PROBLEMS} more`);
    }
    err(`nothing imported (${what})`);
  }
  return 1;
}
