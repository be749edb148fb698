// The history commands, for the day a memory was poisoned: find it (`log`, `history`), see what
// it said (`show`), put one key back (`restore`) or undo a whole run (`revert`).

import type { AuditLogFilter, RevertAction, Store, Version } from "../mod.ts";
import { auditLog, history, readVersion, restoreVersion, revertRun, Scope } from "../mod.ts";
import { UsageError } from "./_args.ts";
import { out, outBytes, plural, quoted, safeJson, show, showBody } from "./_output.ts";

const ENCODER = new TextEncoder();

/** The option values these commands read. */
export interface HistoryOptions {
  readonly json: boolean;
  readonly raw: boolean;
  readonly dryRun: boolean;
  readonly key?: string | undefined;
  readonly run?: string | undefined;
  readonly actor?: string | undefined;
  readonly since?: string | undefined;
  readonly until?: string | undefined;
  readonly tainted: boolean;
  readonly limit?: string | undefined;
}

// The CLI's own writes (restore, revert) are recorded under a run of their own.
function operatorScope(): Scope {
  return new Scope({ actor: "operator" });
}

/** `history <key>`: every kept version, newest first. */
export async function historyCommand(
  store: Store,
  key: string,
  o: HistoryOptions,
): Promise<number> {
  const versions = await history(store, key);
  if (o.json) {
    out(safeJson({ key, versions }));
    return 0;
  }
  if (versions.length === 0) {
    out(`${key}: no versions (never written, or pruned)`);
    return 0;
  }
  out(`${key}: ${plural(versions.length, "version", "versions")}, newest first`);
  for (const v of versions) out(versionLine(v, false));
  return 0;
}

/** `log`: versions across keys, oldest first, filtered. */
export async function logCommand(store: Store, o: HistoryOptions): Promise<number> {
  const filter: AuditLogFilter = {
    ...(o.key === undefined ? {} : { key: o.key }),
    ...(o.run === undefined ? {} : { run: o.run }),
    ...(o.actor === undefined ? {} : { actor: o.actor }),
    ...(o.since === undefined ? {} : { since: o.since }),
    ...(o.until === undefined ? {} : { until: o.until }),
    ...(o.tainted ? { tainted: true } : {}),
    ...(o.limit === undefined ? {} : { limit: positive(o.limit, "--limit") }),
  };
  const versions = await auditLog(store, filter);
  if (o.json) {
    out(safeJson({ versions }));
    return 0;
  }
  if (versions.length === 0) out("(no versions match)");
  for (const v of versions) out(versionLine(v, true));
  return 0;
}

/** `show <key> <revision>`: what one version held. */
export async function showCommand(
  store: Store,
  key: string,
  revision: string,
  o: HistoryOptions,
): Promise<number> {
  const entry = await readVersion(store, key, revision);
  if (o.raw) outBytes(ENCODER.encode(entry.content));
  else if (o.json) out(safeJson({ key, revision, ...entry }));
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
}

/** `restore <key> <revision>`: that version's text written as the newest version. */
export async function restoreCommand(
  store: Store,
  key: string,
  revision: string,
  o: HistoryOptions,
): Promise<number> {
  await restoreVersion(store, key, revision, { scope: operatorScope() });
  const [newest] = await history(store, key);
  if (o.json) out(safeJson({ key, restored: revision, revision: newest?.revision }));
  else out(`restored ${key} to what revision ${revision} held (now revision ${newest?.revision})`);
  return 0;
}

/**
 * `revert --run R [--dry-run]`: every key the run wrote put back (or, in a dry run, what would
 * be done, per key); exit 1 when any key was a conflict. The revert's own writes carry a run id
 * of their own, printed, so the undo can be undone.
 */
export async function revertCommand(store: Store, o: HistoryOptions): Promise<number> {
  if (o.run === undefined) throw new UsageError("revert needs --run <run id>");
  const result = await revertRun(store, o.run, { dryRun: o.dryRun, scope: operatorScope() });
  if (o.json) {
    const { reverted, actions, ...rest } = result;
    out(safeJson(o.dryRun ? { ...rest, planned: actions } : { ...rest, reverted, actions }));
  } else {
    for (const a of result.actions) out(actionLine(a, o.dryRun));
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
        `nothing to revert: every key run ${quoted(o.run)} wrote already holds what it held before`,
      );
    } else if (o.dryRun) {
      out(
        `dry run, nothing written: run ${quoted(o.run)}: ${
          plural(n, "key", "keys")
        } would be put back, ${
          plural(result.conflicts.length, "conflict", "conflicts")
        } left alone`,
      );
    } else {
      out(
        `run ${quoted(o.run)}: ${plural(result.reverted.length, "key", "keys")} put back, ${
          plural(result.conflicts.length, "conflict", "conflicts")
        } left alone; these writes are run ${
          quoted(result.by)
        } (agentmem revert --run ${result.by} undoes them)`,
      );
    }
  }
  return result.conflicts.length === 0 ? 0 : 1;
}

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
  return `${withKey ? `${v.key}\t` : ""}${v.revision}\t${v.at}\t${v.op}\t${show(who)}${what}`;
}

function positive(text: string, option: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(text)) {
    throw new UsageError(`${option} must be a positive whole number`);
  }
  return Number(text);
}
