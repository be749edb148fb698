// The checker: reads a history and the final values, treats every indeterminate write as maybe
// applied, and counts the anomalies that break the promises of docs/backends.md.

import type { FinalRecord, HistoryRecord, OpRecord, VersionsRecord } from "./history.ts";
import { counterIds } from "./workloads.ts";

/** What a run did and what went wrong. Every count but `indeterminate` and `staleReads` must be 0. */
export interface Verdict {
  readonly ops: number;
  /** Writes that failed with `unavailable`: maybe applied. */
  readonly indeterminate: number;
  /** Reads that failed with `unavailable`. */
  readonly failedReads: number;
  /** Typed refusals (`stale`, `exists`, `not_found`, ...). */
  readonly refused: number;
  /** Acknowledged writes missing from the final state (or not seen by a later call). */
  readonly lost: number;
  /** Writes applied twice, or two acknowledged winners of one create race. */
  readonly duplicated: number;
  /** Calls that did not end within their deadline plus the margin. */
  readonly hung: number;
  /** Failures that were not a MemoryError. */
  readonly untyped: number;
  /** Keys present at the end after an acknowledged delete. */
  readonly resurrected: number;
  /** Values in the final state that no acknowledged or indeterminate write could have put there. */
  readonly phantom: number;
  /** Reads that missed a write acknowledged before the read began (not linearizable). */
  readonly staleReads: number;
  /** Keys whose kept versions were read at the end (history on). */
  readonly versionedKeys: number;
  /** Acknowledged writes with no version of their own in the key's history. */
  readonly unversioned: number;
  /** Writes with two versions, or two versions under one revision. */
  readonly doubleVersions: number;
  /** Versions of writes that were refused (so never applied) or never made. */
  readonly phantomVersions: number;
  /** The longest call, in milliseconds. */
  readonly slowestMs: number;
  /** A few anomalies in words, for the report. */
  readonly examples: readonly string[];
}

/** Whether a verdict holds every promise (stale reads are reported, not failed). */
export function passed(v: Verdict): boolean {
  return v.lost + v.duplicated + v.hung + v.untyped + v.resurrected + v.phantom + v.unversioned +
      v.doubleVersions + v.phantomVersions === 0;
}

/** The summary's last line. */
export function summaryLine(v: Verdict): string {
  return `nemesis: ${v.ops} ops, ${v.indeterminate} indeterminate, ${v.lost} lost, ${v.duplicated} duplicated, ${v.hung} hung`;
}

/** The history's line: what the kept versions showed. */
export function historyLine(v: Verdict): string {
  return `nemesis: history of ${v.versionedKeys} keys: ${v.unversioned} acknowledged writes without a version, ${v.doubleVersions} doubled, ${v.phantomVersions} phantom`;
}

const WRITES = new Set(["create", "update", "delete"]);

/** Checks `records` (ops and finals); a call over `deadlineMs + marginMs` counts as hung. */
export function check(
  records: readonly HistoryRecord[],
  opts: { deadlineMs: number; marginMs: number },
): Verdict {
  const ops = records.filter((r): r is OpRecord => r.t === "op");
  const finals = new Map<string, string | null>();
  for (const r of records) if (r.t === "final") finals.set(id(r), (r as FinalRecord).value);
  const versions = new Map<string, VersionsRecord>();
  for (const r of records) if (r.t === "versions") versions.set(id(r), r as VersionsRecord);
  const c = {
    lost: 0,
    duplicated: 0,
    resurrected: 0,
    phantom: 0,
    staleReads: 0,
    unversioned: 0,
    doubleVersions: 0,
    phantomVersions: 0,
  };
  const examples: string[] = [];
  const note = (kind: keyof typeof c, what: string, n = 1) => {
    c[kind] += n;
    if (examples.length < 20) examples.push(`${kind}: ${what}`);
  };
  const byKey = new Map<string, OpRecord[]>();
  for (const op of ops) {
    const k = `${op.wl}:${id(op)}`;
    const list = byKey.get(k) ?? [];
    list.push(op);
    byKey.set(k, list);
  }
  for (const [k, list] of byKey) {
    const wl = k.slice(0, k.indexOf(":"));
    const key = k.slice(k.indexOf(":") + 1);
    if (!finals.has(key)) {
      if (examples.length < 20) examples.push(`unchecked: no final value of ${key}`);
      continue;
    }
    const final = finals.get(key) ?? null;
    if (wl === "ctr") checkCounter(key, list, final, note);
    else if (wl === "uniq") checkUnique(key, list, final, note);
    else checkSet(key, list, final, note);
    const kept = versions.get(key);
    if (kept !== undefined) checkVersions(key, list, kept, note);
  }
  let hung = 0, slowestMs = 0;
  for (const op of ops) {
    const ms = op.complete === undefined ? Infinity : op.complete - op.invoke;
    if (Number.isFinite(ms)) slowestMs = Math.max(slowestMs, ms);
    if (op.outcome === "hung" || ms > opts.deadlineMs + opts.marginMs) {
      hung++;
      if (examples.length < 20) {
        examples.push(`hung: ${op.f} ${id(op)} by client ${op.p} took ${ms} ms`);
      }
    }
  }
  const untyped = ops.filter((o) => o.outcome === "untyped");
  for (const o of untyped.slice(0, 3)) {
    examples.push(`untyped: ${o.f} ${id(o)} failed with ${o.code}`);
  }
  return {
    ops: ops.length,
    indeterminate: ops.filter((o) => WRITES.has(o.f) && o.outcome === "unavailable").length,
    failedReads: ops.filter((o) => o.f === "read" && o.outcome === "unavailable").length,
    refused: ops.filter((o) => o.outcome === "refused").length,
    hung,
    untyped: untyped.length,
    slowestMs,
    versionedKeys: versions.size,
    ...c,
    examples,
  };
}

type Note = (
  kind:
    | "lost"
    | "duplicated"
    | "resurrected"
    | "phantom"
    | "staleReads"
    | "unversioned"
    | "doubleVersions"
    | "phantomVersions",
  what: string,
  n?: number,
) => void;

function id(r: { ns: string; key: string }): string {
  return `${r.ns}/${r.key}`;
}

const maybeApplied = (o: OpRecord) =>
  o.outcome === "ok" || o.outcome === "unavailable" || o.outcome === "hung" ||
  o.outcome === "untyped";

// Every acknowledged increment is in the final list, none twice, none that was refused; and a
// read holds the latest increment acknowledged before it began.
function checkCounter(key: string, ops: OpRecord[], final: string | null, note: Note): void {
  const ids = final === null ? [] : counterIds(final);
  const count = new Map<string, number>();
  for (const x of ids) count.set(x, (count.get(x) ?? 0) + 1);
  const writes = ops.filter((o) => o.v !== undefined);
  const written = new Map(writes.map((o) => [o.v as string, o]));
  for (const w of writes) {
    const n = count.get(w.v as string) ?? 0;
    if (w.outcome === "ok" && n === 0) note("lost", `acknowledged ${w.f} ${w.v} of ${key}`);
    if (w.outcome === "refused" && n > 0) {
      note("phantom", `refused ${w.f} ${w.v} of ${key} was applied`);
    }
  }
  for (const [x, n] of count) {
    if (n > 1) note("duplicated", `${x} is ${n} times in ${key}`, n - 1);
    const w = written.get(x);
    if (w === undefined || !maybeApplied(w)) {
      if (w === undefined) note("phantom", `${x} in ${key} was never written`);
    }
  }
  // A counter only grows: a read that saw `n` ids saw the first `n` of the final list (when
  // nothing was lost). It is stale when the latest increment acknowledged before it began sits
  // past them. Only writes that survived count: a lost one is counted above, not for every read.
  const position = new Map(ids.map((x, i) => [x, i]));
  const acked = writes.filter((w) => w.outcome === "ok" && count.has(w.v as string))
    .sort((a, b) => (a.complete as number) - (b.complete as number));
  for (const r of ops) {
    if (r.f !== "read" || r.outcome !== "ok" || typeof r.r !== "number") continue;
    let latest: OpRecord | undefined;
    for (const w of acked) {
      if ((w.complete as number) < r.invoke) latest = w;
      else break;
    }
    if (latest && (position.get(latest.v as string) ?? -1) >= r.r) {
      note("staleReads", `read of ${key} by client ${r.p} missed ${latest.v}, acknowledged before`);
    }
  }
}

// At most one acknowledged winner per key, and the key holds the winner's value.
function checkUnique(key: string, ops: OpRecord[], final: string | null, note: Note): void {
  const creates = ops.filter((o) => o.f === "create");
  const wins = creates.filter((o) => o.outcome === "ok");
  if (wins.length > 1) {
    note("duplicated", `${wins.length} acknowledged creates of ${key}`, wins.length - 1);
  }
  if (wins.length >= 1 && !wins.some((w) => w.v === final)) {
    note("lost", `${key} holds ${final}, not the acknowledged winner ${wins[0]?.v}`);
  } else if (final === null && creates.some((o) => o.code === "exists")) {
    note("lost", `${key} was reported to exist, and is gone at the end`);
  }
  if (final !== null && !creates.some((o) => o.v === final && maybeApplied(o))) {
    note("phantom", `${key} holds ${final}, which no possibly-applied create wrote`);
  }
}

// Every acknowledged create not later deleted is present; no deleted key comes back.
function checkSet(key: string, ops: OpRecord[], final: string | null, note: Note): void {
  const create = ops.find((o) => o.f === "create");
  const deletes = ops.filter((o) => o.f === "delete");
  const deleted = deletes.some((d) => d.outcome === "ok" && d.r === true);
  const maybeDeleted = deletes.some((d) => d.outcome !== "ok" && d.outcome !== "refused");
  if (create === undefined) return;
  if (deleted && final !== null) note("resurrected", `${key} is back after an acknowledged delete`);
  if (create.outcome === "ok") {
    const missed = deletes.find((d) =>
      d.outcome === "ok" && d.r === false && d.invoke > (create.complete as number)
    );
    if (missed) note("lost", `delete of ${key} found nothing after its create was acknowledged`);
    else if (!deleted && !maybeDeleted && final !== create.v) {
      note("lost", `acknowledged create of ${key} reads as ${final}`);
    }
  }
  if (create.outcome === "refused" && create.code === "exists") {
    note("phantom", `create of the fresh key ${key} was refused as existing`);
  }
  if (final !== null && (final !== create.v || !maybeApplied(create))) {
    note("phantom", `${key} holds ${final} after a create that ended ${create.outcome}`);
  }
}

// Every acknowledged write has its version (found by the write id its call carried), no write has
// two, no revision is kept twice, and no version belongs to a write that was refused or never
// made. A delete that found nothing wrote nothing, so it has no version.
function checkVersions(key: string, ops: OpRecord[], kept: VersionsRecord, note: Note): void {
  const byId = new Map<string, number>();
  const revisions = new Set<string>();
  for (const v of kept.versions) {
    if (revisions.has(v.rev)) note("doubleVersions", `revision ${v.rev} of ${key} is kept twice`);
    revisions.add(v.rev);
    if (v.id !== undefined) byId.set(v.id, (byId.get(v.id) ?? 0) + 1);
  }
  const writes = new Map<string, OpRecord>();
  for (const o of ops) if (WRITES.has(o.f) && o.v !== undefined) writes.set(o.v, o);
  for (const o of writes.values()) {
    const wrote = o.f !== "delete" || o.r === true;
    if (o.outcome === "ok" && wrote && !byId.has(o.v as string)) {
      note("unversioned", `acknowledged ${o.f} ${o.v} of ${key} has no version`);
    }
  }
  for (const [writeId, n] of byId) {
    if (n > 1) note("doubleVersions", `write ${writeId} of ${key} has ${n} versions`, n - 1);
    const o = writes.get(writeId);
    if (o === undefined) note("phantomVersions", `version of ${key} by ${writeId}, never written`);
    else if (!maybeApplied(o)) {
      note("phantomVersions", `version of ${key} by ${writeId}, which ended ${o.outcome}`);
    }
  }
}
