// `check` and `export`: both walk every name in the store's keyspace, including the ones `list`
// hides, so a damaged entry is reported by name instead of silently left out.

import {
  type Anchor,
  type AuditEntry,
  auditStore,
  checkAnchor,
  type HistoryProblem,
} from "../mod.ts";
import { loadAnchorFile, saveAnchorFile } from "./_anchor.ts";
import { UsageError } from "./_args.ts";
import { dumpHeader, dumpRecord, dumpTrailer } from "./_dump.ts";
import type { OpenedStore as Opened } from "./_open.ts";
import { err, errJson, out, plural, quoted, safeJson, show } from "./_output.ts";
import { whereLine } from "./_commands.ts";
import type { Command } from "./_spec.ts";

export const checkCommand: Command = {
  name: "check",
  summary:
    "every entry in the keyspace, including those list hides, and every key's history; exit 1 if anything is damaged",
  about:
    "Reports damaged headers or bodies, illegal names, stray values, broken or edited history chains, and lock files left by something other than this library.",
  reach: "store",
  options: {
    "save-anchor": {
      kind: "string",
      value: "<file>",
      help:
        "also write the store's anchor (every key's newest revision and hash) to this file, and print its SHA-256 to keep where the store's writers cannot reach it",
    },
    anchor: {
      kind: "string",
      value: "<file>",
      help:
        "also report every key whose chain no longer extends the state this anchor saved (removed, rewritten, rolled back)",
    },
    "anchor-sha256": {
      kind: "string",
      value: "<hex>",
      help: "with --anchor: refuse an anchor file whose SHA-256 is not this one",
    },
  },
  examples: [
    "agentmem check --dir ./.agentmem",
    "agentmem check --dir ./.agentmem --save-anchor anchor.json",
    "agentmem check --dir ./.agentmem --anchor anchor.json",
  ],
  alias: ["verify", "fsck", "doctor"],
  run: async (ctx) => {
    const anchorFile = ctx.str("anchor");
    const sha = ctx.str("anchor-sha256");
    if (sha !== undefined && anchorFile === undefined) {
      throw new UsageError("--anchor-sha256 goes with --anchor <file>");
    }
    if (sha !== undefined && !/^[0-9a-fA-F]{64}$/.test(sha)) {
      throw new UsageError(
        "--anchor-sha256 must be 64 hexadecimal digits, as --save-anchor printed",
      );
    }
    // Read before opening the store: a missing or changed anchor touches nothing.
    const anchor = anchorFile === undefined ? undefined : await loadAnchorFile(anchorFile, sha);
    return check(await ctx.open(), {
      json: ctx.json,
      anchor,
      saveTo: ctx.str("save-anchor"),
    });
  },
};

export const exportCommand: Command = {
  name: "export",
  summary: "a versioned dump on stdout, one JSON object a line; exit 1 if any entry was left out",
  about:
    'A header, one {"key","description","content"} per memory, a trailer with the count. Every readable entry is written, each unreadable one is named on stderr.',
  reach: "store",
  examples: ["agentmem export --dir ./.agentmem > dump.jsonl"],
  alias: ["dump", "backup", "save"],
  run: async (ctx) => exportDump(await ctx.open(), ctx.json),
};

/** What `check` was asked for besides the audit. */
interface CheckOptions {
  readonly json: boolean;
  readonly anchor: Anchor | undefined;
  readonly saveTo: string | undefined;
}

/** `check`: every name, healthy or not; exit 1 when any is not. */
async function check(opened: Opened, o: CheckOptions): Promise<number> {
  const { json } = o;
  const audit = await auditStore(opened.store);
  const anchored = o.anchor === undefined ? undefined : await checkAnchor(opened.store, o.anchor);
  const saved = o.saveTo === undefined ? undefined : await saveAnchorFile(opened.store, o.saveTo);
  const notes = audit.notes ?? [];
  // The whole bucket (prefix ""): which prefixes it looked at, by the keys' first parts.
  const prefixes = opened.prefix === "" ? prefixCounts(audit.entries) : undefined;
  const healthy = audit.entries.filter((e) => e.problem === undefined).length;
  const problems = audit.entries.filter((e) => e.problem !== undefined);
  const chain = audit.history ?? [];
  const locks = audit.locks ?? [];
  const blocking = locks.filter((l) => l.state === "foreign").length;
  const info = opened.store.info();
  if (json) {
    out(safeJson({
      backend: info.backend,
      location: info.location,
      ...(opened.prefix === undefined ? {} : { prefix: opened.prefix }),
      ...(prefixes === undefined ? {} : { prefixes: Object.fromEntries(prefixes) }),
      entries: audit.entries.length,
      healthy,
      problems: problems.map((p) => ({
        name: p.name,
        ...(p.key === undefined ? {} : { key: p.key }),
        error: p.problem,
        message: p.reason,
      })),
      ignored: audit.ignored,
      history: chain,
      ...(notes.length === 0 ? {} : { notes }),
      ...(anchored === undefined ? {} : { anchor: anchored }),
      ...(saved === undefined ? {} : { savedAnchor: saved }),
      locks: locks.map((l) => ({
        name: l.name,
        ...(l.key === undefined ? {} : { key: l.key }),
        state: l.state,
        message: l.reason,
      })),
    }));
  } else {
    const where = whereLine(opened);
    if (where !== undefined) out(where);
    if (prefixes !== undefined && prefixes.size > 0) {
      out(
        `looked at every prefix: ${
          [...prefixes].map(([p, n]) => `${p === "" ? "(no prefix)" : quoted(p)} ${n}`).join(", ")
        } (keys by their first part; a flat key with a dot counts under its first part)`,
      );
    }
    out(
      `${info.backend}: ${plural(audit.entries.length, "entry", "entries")}, ${healthy} healthy, ${
        plural(problems.length, "problem", "problems")
      }${blocking === 0 ? "" : `, ${plural(blocking, "lock", "locks")} to remove`}`,
    );
    for (const p of problems) out(`  ${quoted(p.name)}: ${label(p)}: ${show(p.reason ?? "")}`);
    for (const l of locks) {
      const what = l.state === "foreign"
        ? "blocking lock"
        : l.state === "dead"
        ? "dead lock"
        : "lock";
      out(`  ${quoted(l.name)}: ${what}: ${show(l.reason)}`);
    }
    if (audit.ignored.length > 0) {
      out(
        `  (${plural(audit.ignored.length, "other name", "other names")} ignored, never memories: ${
          audit.ignored.slice(0, 20).map(quoted).join(", ")
        }${audit.ignored.length > 20 ? ", …" : ""})`,
      );
    }
    if (chain.length > 0) {
      out(`history: ${plural(chain.length, "problem", "problems")}`);
      for (const p of chain) out(problemLine(p));
    }
    for (const n of notes) out(`note: ${show(n)}`);
    if (anchored !== undefined) {
      out(
        `anchor: ${plural(anchored.checked, "key", "keys")} checked, ${
          plural(anchored.problems.length, "problem", "problems")
        }${
          anchored.outside === 0
            ? ""
            : ` (${plural(anchored.outside, "key", "keys")} under other prefixes not checked)`
        }`,
      );
      for (const p of anchored.problems) out(problemLine(p));
    }
    if (saved !== undefined) {
      out(
        `anchor saved: ${
          plural(saved.keys, "key", "keys")
        }, sha256 ${saved.sha256} (keep it where the store's writers cannot reach it; check it later with --anchor and --anchor-sha256)`,
      );
    }
  }
  const anchorProblems = anchored?.problems.length ?? 0;
  return problems.length === 0 && chain.length === 0 && blocking === 0 && anchorProblems === 0
    ? 0
    : 1;
}

function problemLine(p: HistoryProblem): string {
  return `  ${quoted(p.key)}${
    p.revision === undefined ? "" : ` revision ${p.revision}`
  }: ${p.problem}: ${show(p.reason)}`;
}

/** `export`: the versioned dump on stdout; every entry left out is named on stderr (exit 1). */
async function exportDump(opened: Opened, json: boolean): Promise<number> {
  const audit = await auditStore(opened.store);
  out(dumpHeader());
  let records = 0;
  const skipped: AuditEntry[] = [];
  for (const e of audit.entries) {
    if (e.entry !== undefined && e.key !== undefined) {
      out(dumpRecord(e.key, e.entry));
      records++;
    } else skipped.push(e);
  }
  out(dumpTrailer(records, skipped.length));
  for (const s of skipped) {
    if (json) {
      errJson({ error: s.problem, name: s.name, message: `Not exported: ${s.reason}` });
    } else err(`not exported: ${quoted(s.name)}: ${label(s)}: ${s.reason}`);
  }
  if (!json) {
    err(
      `exported ${plural(records, "memory", "memories")}${
        skipped.length === 0 ? "" : `; ${plural(skipped.length, "entry", "entries")} left out`
      }`,
    );
  }
  return skipped.length === 0 ? 0 : 1;
}

function label(e: AuditEntry): string {
  switch (e.problem) {
    case "corrupt":
      return "damaged";
    case "illegal_name":
      return "illegal name";
    case "not_a_file":
      return "not a memory file";
    case "unreadable":
      return "unreadable";
    default:
      return "ok";
  }
}

// How many of the audited names stand under each first part (`agent.k` → `agent`; `k` → "").
function prefixCounts(entries: readonly AuditEntry[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of entries) {
    const name = e.key ?? e.name;
    const dot = name.indexOf(".");
    const prefix = dot < 0 ? "" : name.slice(0, dot);
    counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
  }
  return new Map([...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
