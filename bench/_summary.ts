// The summary of a run: medians per target and operation, the library's ratios to its floors in
// the same trial, the listing medians, and the speed targets, each judged on the median of
// per-trial (or per-rep) ratios.

import type { Keyspace } from "./_args.ts";
import type { Backend, ListMethod, Op, PhaseResult, TargetName } from "./_protocol.ts";
import { fmtSpread, sizeLabel } from "./_format.ts";
import { groupBy, median, percentile, ratios, round } from "./_stats.ts";
import type { MicroRow } from "./micro.ts";

/** One phase of one run, every worker merged. */
export type PhaseSummary = ReturnType<typeof summarizePhase>;

/** One run: one target, fresh directory or bucket, every phase of the mix. */
export interface RunRecord {
  readonly section: "main";
  readonly trial: number;
  readonly keyspace: Keyspace;
  readonly processes: number;
  readonly backend: Backend;
  readonly target: TargetName;
  readonly phases: PhaseSummary[];
}

/** One timed listing. */
export interface ListRecord {
  readonly backend: Backend;
  readonly rep: number;
  readonly method: ListMethod;
  readonly ms: number;
  readonly bytesRead: number;
  readonly entries: number;
  readonly valueSize: number;
}

/** Everything computed from the records. */
export type Summary = ReturnType<typeof summarize>;
/** Medians over trials of one target's operation. */
export type MainRow = ReturnType<typeof mainRows>[number];
/** The library's ops/s over its floor's: the median, lowest and highest per-trial ratio. */
export type RatioRow = ReturnType<typeof libraryRatios>[number];
/** Medians of one listing method. */
export type ListRow = ReturnType<typeof listRows>[number];

const STATS = ["opsPerSec", "p50Ms", "p95Ms", "p99Ms", "exists", "stale", "retries"] as const;

/** One phase of every worker merged: throughput over the wall time, latency percentiles. */
export function summarizePhase(op: Op, results: readonly PhaseResult[]) {
  const latencies = results.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const wallMs = Math.max(...results.map((r) => r.end)) - Math.min(...results.map((r) => r.start));
  const sum = (f: (r: PhaseResult) => number) => results.reduce((s, r) => s + f(r), 0);
  const ms = (p: number) => round(percentile(latencies, p) / 1000, 4);
  return {
    op,
    operations: latencies.length,
    wallMs: round(wallMs, 3),
    opsPerSec: round(wallMs > 0 ? latencies.length / (wallMs / 1000) : 0, 1),
    p50Ms: ms(50),
    p95Ms: ms(95),
    p99Ms: ms(99),
    exists: sum((r) => r.exists),
    stale: sum((r) => r.stale),
    retries: sum((r) => r.retries),
  };
}

/** Computes medians, ratios and targets from the records. */
export function summarize(
  runs: readonly RunRecord[],
  lists: readonly ListRecord[],
  micro?: MicroRows,
) {
  const ratioRows = libraryRatios(runs);
  const list = listRows(lists);
  const targets = [
    ...operationTargets(ratioRows),
    ...listTargets(list, lists),
    ...microTargets(micro),
  ];
  return { main: mainRows(runs), ratios: ratioRows, list, targets };
}

function mainRows(runs: readonly RunRecord[]) {
  const phases = runs.flatMap((run) => run.phases.map((phase) => ({ run, phase })));
  const groups = groupBy(phases, ({ run, phase }) => `${run.keyspace}|${run.target}|${phase.op}`);
  return groups.map((group) => {
    const { run: { keyspace, backend, target, processes }, phase: { op } } =
      group[0] as (typeof phases)[0];
    const medians = STATS.map((k) => [k, median(group.map((g) => g.phase[k]))]);
    const stats = Object.fromEntries(medians) as Record<(typeof STATS)[number], number>;
    return { keyspace, backend, target, op, processes, ...stats, trials: group.length };
  });
}

// Per trial, the library's ops/s over its floor's in the same trial; then their spread.
function libraryRatios(runs: readonly RunRecord[]) {
  const trials = [...new Set(runs.map((r) => r.trial))];
  return [...new Set(runs.map((r) => r.keyspace))].flatMap((keyspace) =>
    (["file", "jetstream"] as const).flatMap((backend) => {
      const [target, baseline] = [backend, `${backend}-raw`] as const;
      return (["create", "update", "read", "delete", "counter"] as const).flatMap((op) => {
        const rate = (trial: number, t: TargetName) =>
          runs.find((r) => r.trial === trial && r.keyspace === keyspace && r.target === t)
            ?.phases.find((p) => p.op === op)?.opsPerSec;
        const { median: ratio, min, max, trials: n } = ratios(
          trials.map((t) => [rate(t, target), rate(t, baseline)]),
        );
        return n === 0
          ? []
          : [{ keyspace, backend, op, target, baseline, ratio, min, max, trials: n }];
      });
    })
  );
}

function listRows(lists: readonly ListRecord[]) {
  return groupBy(lists, (l) => `${l.valueSize}|${l.backend}|${l.method}`).map((group) => {
    const { backend, method, entries, valueSize } = group[0] as ListRecord;
    const [ms, bytesRead] = [median(group.map((g) => g.ms)), median(group.map((g) => g.bytesRead))];
    return {
      backend,
      method,
      ms,
      bytesRead,
      bytesPerEntry: bytesRead / entries,
      entries,
      valueSize,
      reps: group.length,
    };
  });
}

/** A speed target and whether this run met it (`null`: not measured, or reported only). */
export interface TargetRow {
  readonly goal: string;
  readonly measured: string;
  readonly met: boolean | null;
}

/** What bench/micro.ts measured, as far as its targets go. */
type MicroRows = { readonly rows: readonly MicroRow[] } | undefined;

const REFERENCE = new URL("./reference.json", import.meta.url);

const row = (goal: string, measured: string, met: boolean | null): TargetRow => ({
  goal,
  measured,
  met,
});
const notMeasured = (goal: string) => row(goal, "not measured", null);

/** Create and update at least 0.9x the floor's throughput; read time at most 1.5x (file), 1.1x. */
function operationTargets(rows: readonly RatioRow[]): TargetRow[] {
  return (["file", "jetstream"] as const).flatMap((backend) =>
    (["create", "update", "read"] as const).map((op) => {
      const found = rows.filter((r) => r.backend === backend && r.op === op);
      const min = op !== "read" ? 0.9 : backend === "file" ? 1 / 1.5 : 1 / 1.1;
      const goal = op === "read"
        ? `${backend} read time <= ${(1 / min).toFixed(1)}x ${backend}-raw (the floor)`
        : `${backend} ${op} >= ${min}x ${backend}-raw`;
      if (found.length === 0) return notMeasured(goal);
      // A read target is a time ratio: the inverse of the throughput ratio.
      const spread = (r: RatioRow) =>
        op === "read"
          ? { median: 1 / r.ratio, min: 1 / r.max, max: 1 / r.min }
          : { median: r.ratio, ...r };
      const measured = found.map((r) => fmtSpread(spread(r)).replace("(", `(${r.keyspace}; `));
      return row(goal, measured.join(", "), found.every((r) => r.ratio >= min));
    })
  );
}

// Per rep, the time of `over` over that of `under`; then the median.
function listRatio(lists: readonly ListRecord[], over: ListMethod, under: ListMethod): number {
  const ms = (rep: number, m: ListMethod) => lists.find((l) => l.rep === rep && l.method === m)?.ms;
  return ratios([...new Set(lists.map((l) => l.rep))].map((rep) => [ms(rep, over), ms(rep, under)]))
    .median;
}

/** The list targets: time against the floors and keys()+get(), and bytes against the floor's. */
function listTargets(list: readonly ListRow[], lists: readonly ListRecord[]): TargetRow[] {
  const file = lists.filter((l) => l.backend === "file");
  return [
    ...jetStreamList(lists.filter((l) => l.backend === "jetstream")),
    fileListTime(file),
    fileListBytes(list, lists),
  ];
}

const sizesOf = (lists: readonly ListRecord[]) =>
  [...new Set(lists.map((l) => l.valueSize))].sort((a, b) => a - b);

// Judged at the smallest body size measured (a typical memory); larger bodies are reported beside
// it. With large bodies a listing and keys()+get() move the same bytes, so "keys()+get() ÷ one
// watch pass" is the most any listing could reach.
function jetStreamList(js: readonly ListRecord[]): TargetRow[] {
  const [watchGoal, keysGoal] = [
    "jetstream list <= 2x one watch pass",
    "jetstream list >= 5x faster than keys()+get()",
  ];
  const at = (size: number) => js.filter((l) => l.valueSize === size);
  const has = (size: number, m: ListMethod) => at(size).some((l) => l.method === m);
  const sizes = sizesOf(js);
  const judged = sizes[0];
  if (judged === undefined || !has(judged, "jetstream")) {
    return [notMeasured(watchGoal), notMeasured(keysGoal)];
  }
  const label = (size: number) => `${sizeLabel(size)} bodies${size === judged ? "" : ", info"}`;
  const watch = sizes.filter((s) => has(s, "jetstream-watch"))
    .map((size) => ({ size, ratio: listRatio(at(size), "jetstream", "jetstream-watch") }));
  const keys = sizes.filter((s) => has(s, "jetstream-keys-get")).map((size) => ({
    size,
    ratio: listRatio(at(size), "jetstream-keys-get", "jetstream"),
    ceiling: has(size, "jetstream-watch")
      ? listRatio(at(size), "jetstream-keys-get", "jetstream-watch")
      : NaN,
  }));
  const w0 = watch.find((w) => w.size === judged);
  const k0 = keys.find((k) => k.size === judged);
  const watchText = watch.map((w) => `${w.ratio.toFixed(2)}x (${label(w.size)})`).join("; ");
  const keysText = keys.map((k) =>
    `${k.ratio.toFixed(1)}x (${label(k.size)}; a watch pass is ${k.ceiling.toFixed(1)}x)`
  );
  return [
    row(watchGoal, watchText || "not measured", w0 === undefined ? null : w0.ratio <= 2),
    row(keysGoal, keysText.join("; ") || "not measured", k0 === undefined ? null : k0.ratio >= 5),
  ];
}

// Judged at the smallest body size measured (a typical memory); larger ones are shown beside it.
function fileListTime(file: readonly ListRecord[]): TargetRow {
  const goal = "file list <= 2x the raw pass (directory + first KiB of each)";
  const at = sizesOf(file).map((size) => ({
    size,
    ratio: listRatio(file.filter((l) => l.valueSize === size), "file", "file-headers"),
  })).filter((r) => Number.isFinite(r.ratio));
  const first = at[0];
  if (first === undefined) return notMeasured(goal);
  const entries = file[0]?.entries ?? 0;
  const measured = at.map((r) =>
    `${r.ratio.toFixed(2)}x (${entries} entries, ${sizeLabel(r.size)} bodies)`
  );
  return row(goal, measured.join("; "), first.ratio <= 2);
}

// Judged at the largest body size measured, where reading a body would show most: at most 1.25x
// the bytes the floor reads, and less than a body per entry.
function fileListBytes(list: readonly ListRow[], lists: readonly ListRecord[]): TargetRow {
  const goal = "file list reads no bodies (bytes read vs the header-only baseline)";
  const size = Math.max(-1, ...list.filter((l) => l.backend === "file").map((l) => l.valueSize));
  const lib = list.find((l) => l.method === "file" && l.valueSize === size);
  const headers = list.find((l) => l.method === "file-headers" && l.valueSize === size);
  if (lib === undefined || headers === undefined) return notMeasured(goal);
  const r = listRatio(lists.filter((l) => l.valueSize === size), "file", "file-headers");
  const time = `${r.toFixed(2)}x the baseline's time`;
  if (lib.bytesRead < 0 || headers.bytesRead < 0) {
    return row(goal, `bytes read unknown (no /proc/self/io); ${time}`, null);
  }
  const perEntry = (l: ListRow) => `${Math.round(l.bytesPerEntry)} B/entry`;
  const met = lib.bytesRead <= headers.bytesRead * 1.25 && lib.bytesPerEntry < lib.valueSize;
  return row(
    goal,
    `${perEntry(lib)} vs ${perEntry(headers)} with ${sizeLabel(size)} bodies; ${time}`,
    met,
  );
}

/**
 * The single-process targets. The 16-in-flight ones are judged against today's library run in the
 * same trial, or, without git to extract it, against the number recorded in bench/reference.json.
 */
function microTargets(micro: MicroRows): TargetRow[] {
  const rows = micro?.rows ?? [];
  const reference = rows.some((r) => r.section.startsWith("inflight"))
    ? JSON.parse(Deno.readTextFileSync(REFERENCE)) as { median: Record<string, number> }
    : undefined;
  return rows.map((r) => {
    const spread = fmtSpread(r.ratio);
    const value = (label: string) => r.values[label] as number;
    if (r.section === "exists") {
      return row(
        `${r.backend} create of an existing key <= 1.5x a read`,
        spread,
        r.ratio.median <= 1.5,
      );
    }
    if (r.section === "capacity") {
      const goal = `${r.backend} exact capacity adds <= 10% to a create at 1,000 entries`;
      return row(goal, `${spread} of the empty store's ratio to raw`, r.ratio.median <= 1.1);
    }
    if (r.section === "rbu") {
      const off = (value("update, option off") / value("raw update")).toFixed(2);
      const goal = "file update with readBeforeUpdate: true, against the raw durable update";
      return row(goal, `${spread}; with the option off ${off}x`, null);
    }
    const op = r.section.slice("inflight ".length);
    const fixed = value("library") / (reference?.median[op] as number);
    const live = r.ratio.of.endsWith("today's library");
    const measured = `${live ? `${spread}; ` : ""}${fixed.toFixed(2)}x the recorded reference`;
    return row(
      `file ${op}, 16 in flight, >= 1.5x today's library`,
      measured,
      (live ? r.ratio.median : fixed) >= 1.5,
    );
  });
}
