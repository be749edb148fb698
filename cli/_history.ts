// The history commands, for the day a memory was poisoned: find it (`log`, `history`), see what
// it said (`show`), put one key back (`restore`) or undo a whole run (`revert`).

import type { AuditLogFilter, Proposal, RevertAction, Version } from "../mod.ts";
import { auditLog, history, readVersion, restoreVersion, revertRun, Scope } from "../mod.ts";
import { UsageError } from "./_args.ts";
import { checkRaw, RAW } from "./_commands.ts";
import { err, out, outBytes, plural, quoted, safeJson, show, showBody } from "./_output.ts";
import type { Command } from "./_spec.ts";
import { decisionsOf, eventLine, events } from "./_review.ts";

const ENCODER = new TextEncoder();

// The CLI's own writes (restore, revert) are recorded under a run of their own.
function operatorScope(): Scope {
  return new Scope({ actor: "operator" });
}

export const historyCommand: Command = {
  name: "history",
  summary: "every kept version of a memory, newest first, and who wrote each",
  about:
    "Each line: revision, time, what the write did, and who made it (run, actor, the path it came by, the model's tool call id, whether the run was tainted). Proposals held for review and decided since are listed among them: approved (with the revision the approval wrote) or rejected (with the reason).",
  args: [{ name: "key" }],
  reach: "store",
  examples: ["agentmem history user.name --dir ./.agentmem"],
  alias: ["versions"],
  run: async (ctx) => {
    const { store } = await ctx.open();
    const key = ctx.args[0]!;
    const versions = await history(store, key);
    const decisions = await decisionsOf(store, { key });
    if (ctx.json) {
      out(safeJson({ key, versions, decisions }));
      return 0;
    }
    if (versions.length === 0 && decisions.length === 0) {
      const where = await ctx.elsewhere(key);
      if (where !== undefined) {
        err(`${key}: no versions under this prefix; ${where}`);
        return 1;
      }
      out(`${key}: no versions (never written, or pruned)`);
      return 0;
    }
    out(`${key}: ${plural(versions.length, "version", "versions")}, newest first`);
    const all = events([...versions].reverse(), decisions).reverse();
    for (const e of all) out(eventLine(e, decisions, (v) => versionLine(v, false), false));
    return 0;
  },
};

export const logCommand: Command = {
  name: "log",
  summary: "versions across keys, newest first (--reverse: oldest first), filtered",
  about:
    "--limit keeps the newest that match; with --reverse they are shown oldest first, as git log --reverse does.",
  options: {
    key: { kind: "string", value: "<key>", help: "only this key's versions" },
    run: { kind: "string", value: "<id>", help: "only this run's writes" },
    actor: { kind: "string", value: "<id>", help: "only writes for this actor" },
    since: {
      kind: "string",
      value: "<time>",
      help: "versions at or after this time (ISO 8601, e.g. 2026-12-01T08:00Z)",
    },
    until: { kind: "string", value: "<time>", help: "versions before this time" },
    tainted: { kind: "boolean", help: "only writes from runs that read untrusted input" },
    limit: { kind: "string", value: "<n>", help: "at most this many versions, the newest" },
    reverse: { kind: "boolean", help: "oldest first" },
  },
  reach: "store",
  examples: [
    "agentmem log --limit 20 --dir ./.agentmem",
    "agentmem log --tainted --dir ./.agentmem",
  ],
  alias: ["audit", "journal"],
  run: async (ctx) => {
    const limit = ctx.str("limit");
    const n = limit === undefined ? undefined : positive(limit, "--limit");
    const filter: AuditLogFilter = {
      ...(ctx.str("key") === undefined ? {} : { key: ctx.str("key") }),
      ...(ctx.str("run") === undefined ? {} : { run: ctx.str("run") }),
      ...(ctx.str("actor") === undefined ? {} : { actor: ctx.str("actor") }),
      ...(ctx.str("since") === undefined ? {} : { since: ctx.str("since") }),
      ...(ctx.str("until") === undefined ? {} : { until: ctx.str("until") }),
      ...(ctx.flag("tainted") ? { tainted: true } : {}),
    };
    const { store } = await ctx.open();
    // auditLog gives the oldest first; the newest n are its last n. Decided proposals go among
    // them by the time they were decided.
    const decisions = (await decisionsOf(store, filter)).filter((p) => decisionMatches(p, filter));
    const all = events(await auditLog(store, filter), decisions);
    const chosen = n === undefined ? all : all.slice(Math.max(0, all.length - n));
    const shown = ctx.flag("reverse") ? chosen : chosen.reverse();
    if (ctx.json) {
      const versions = shown.flatMap((e) => e.kind === "version" ? [e.version] : []);
      out(
        safeJson({
          versions,
          decisions: shown.flatMap((e) => e.kind === "decision" ? [e.proposal] : []),
        }),
      );
      return 0;
    }
    if (shown.length === 0) out("(no versions match)");
    for (const e of shown) out(eventLine(e, decisions, (v) => versionLine(v, true), true));
    return 0;
  },
};

export const showCommand: Command = {
  name: "show",
  summary: "what one version of a memory held (--raw: the body alone)",
  args: [{ name: "key" }, { name: "revision" }],
  options: RAW,
  reach: "store",
  examples: ["agentmem show user.name <revision> --dir ./.agentmem"],
  run: async (ctx) => {
    checkRaw(ctx);
    const { store } = await ctx.open();
    const [key, revision] = ctx.args as [string, string];
    const entry = await readVersion(store, key, revision);
    if (ctx.flag("raw")) outBytes(ENCODER.encode(entry.content));
    else if (ctx.json) out(safeJson({ key, revision, ...entry }));
    else {
      const body = showBody(entry.content);
      outBytes(
        ENCODER.encode(
          `${key} at revision ${revision}\ndescription: ${show(entry.description)}\n\n${body}${
            body.endsWith("\n") ? "" : "\n"
          }`,
        ),
      );
    }
    return 0;
  },
};

export const restoreCommand: Command = {
  name: "restore",
  summary:
    "write what a version held as the newest version (a deleted key comes back); refused as stale if the memory changed meanwhile",
  args: [{ name: "key" }, { name: "revision" }],
  reach: "store",
  writes: "always",
  examples: ["agentmem restore user.name <revision> --dir ./.agentmem"],
  alias: ["rollback"],
  run: async (ctx) => {
    const { store } = await ctx.open();
    const [key, revision] = ctx.args as [string, string];
    await restoreVersion(store, key, revision, { scope: operatorScope() });
    const [newest] = await history(store, key);
    if (ctx.json) out(safeJson({ key, restored: revision, revision: newest?.revision }));
    else {
      out(`restored ${key} to what revision ${revision} held (now revision ${newest?.revision})`);
    }
    return 0;
  },
};

export const revertCommand: Command = {
  name: "revert",
  summary: "put every key a run wrote back to what it held before the run's first write",
  about:
    "Run it with --dry-run first: it says what would change. A key someone else wrote since is left alone and named as a conflict (exit 1).",
  options: {
    run: { kind: "string", value: "<id>", help: "the run to undo", required: true },
    "dry-run": { kind: "boolean", help: "say what would change, change nothing" },
  },
  reach: "store",
  writes: "unless-dry-run",
  examples: ["agentmem revert --run <run id> --dry-run --dir ./.agentmem"],
  alias: ["undo"],
  run: async (ctx) => {
    const run = ctx.str("run")!;
    const dryRun = ctx.flag("dry-run");
    const { store } = await ctx.open();
    const result = await revertRun(store, run, { dryRun, scope: operatorScope() });
    if (ctx.json) {
      const { reverted, actions, ...rest } = result;
      out(safeJson(dryRun ? { ...rest, planned: actions } : { ...rest, reverted, actions }));
    } else {
      for (const a of result.actions) out(actionLine(a, dryRun));
      for (const key of result.already) out(`already as before the run: ${key}`);
      for (const c of result.conflicts) out(`conflict ${c.key}: ${show(c.reason)}`);
      for (const p of result.problems) {
        out(
          `skipped ${p.key}${p.revision === undefined ? "" : ` revision ${p.revision}`}: ${
            show(p.reason)
          }`,
        );
      }
      const n = result.actions.length;
      if (n === 0 && result.conflicts.length === 0) {
        out(
          `nothing to revert: every key run ${quoted(run)} wrote already holds what it held before`,
        );
      } else if (dryRun) {
        out(
          `dry run, nothing written: run ${quoted(run)}: ${
            plural(n, "key", "keys")
          } would be put back, ${
            plural(result.conflicts.length, "conflict", "conflicts")
          } left alone`,
        );
      } else {
        out(
          `run ${quoted(run)}: ${plural(result.reverted.length, "key", "keys")} put back, ${
            plural(result.conflicts.length, "conflict", "conflicts")
          } left alone; these writes are run ${quoted(result.by)} (${
            ctx.again(`revert --run ${result.by}`)
          } undoes them)`,
        );
      }
    }
    return result.conflicts.length === 0 ? 0 : 1;
  },
};

function actionLine(a: RevertAction, dryRun: boolean): string {
  const from = a.revision === undefined ? "" : ` revision ${a.revision}`;
  const now = a.wrote === undefined ? "" : ` (now revision ${a.wrote})`;
  switch (a.action) {
    case "deleted":
      return `${dryRun ? "would delete" : "deleted"} ${a.key}${now}`;
    case "restored":
      return `${dryRun ? "would restore" : "restored"} ${a.key} to${from}${now}`;
    case "recreated":
      return `${dryRun ? "would re-create" : "re-created"} ${a.key} from${from}${now}`;
  }
}

function versionLine(v: Version, withKey: boolean): string {
  const who = [
    v.run === undefined ? "no run" : `run ${v.run}`,
    ...(v.actor === undefined ? [] : [`actor ${v.actor}`]),
    `via ${v.via}`,
    ...(v.callId === undefined ? [] : [`call ${v.callId}`]),
    ...(v.tainted ? ["TAINTED"] : []),
  ].join(", ");
  const what = v.description === undefined ? "" : `  ${show(v.description)}`;
  const red = v.redacted === undefined
    ? ""
    : `  REDACTED at ${v.redacted.at}${
      v.redacted.actor === undefined ? "" : ` by ${v.redacted.actor}`
    }: ${quoted(v.redacted.reason)}`;
  return `${withKey ? `${v.key}\t` : ""}${v.revision}\t${v.at}\t${v.op}\t${show(who)}${what}${red}`;
}

// Whether a decided proposal passes the log's filters: the proposal's actor and taint, the
// decision's time (key and run are the proposals() filter's).
function decisionMatches(p: Proposal, f: AuditLogFilter): boolean {
  const at = Date.parse(p.decision!.at);
  if (f.actor !== undefined && p.actor !== f.actor) return false;
  if (f.tainted !== undefined && p.tainted !== f.tainted) return false;
  if (f.since !== undefined && at < Date.parse(f.since)) return false;
  return f.until === undefined || at < Date.parse(f.until);
}

function positive(text: string, option: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(text)) {
    throw new UsageError(`${option} must be a positive whole number`);
  }
  return Number(text);
}
