// The summary of a run: medians per target and operation, the library's ratios to its floors,
// the listing medians, and every speed target with whether it was met.

import type { Backend, ListMethod, Op, PhaseResult, TargetName } from "./_protocol.ts";
import type {
  ListRecord,
  ListRow,
  MainRow,
  MicroResult,
  MicroRow,
  PhaseSummary,
  RatioRow,
  RunRecord,
  Summary,
  TargetRow,
} from "./_results.ts";
import { fmtSpread, sizeLabel } from "./_format.ts";
import { groupBy, median, percentile, ratios, round } from "./_stats.ts";

const BACKENDS: readonly Backend[] = ["file", "jetstream"];
const TARGET_OPS: readonly Op[] = ["create", "update", "read"];
const REFERENCE = new URL("./reference.json", import.meta.url);

/** The throughput a library operation must reach against its floor (a time ratio's inverse). */
export function minRatio(backend: Backend, op: Op): number {
  if (op === "read") return backend === "file" ? 1 / 1.5 : 1 / 1.1;
  return 0.9;
}
/** The file list may take at most this many times the raw pass (directory + first KiB each). */
export const MAX_LIST_OVER_RAW = 2;
/** The jetstream list may take at most this many times one watch pass. */
export const MAX_LIST_OVER_WATCH = 2;
/** The jetstream list must be at least this many times faster than keys()+get(). */
export const MIN_KEYS_GET_OVER_LIST = 5;
/** The file list may read at most this many times the header-only baseline's bytes. */
export const MAX_LIST_BYTES_OVER_HEADERS = 1.25;

/** One phase of every worker merged: throughput over the wall time, latency percentiles. */
export function summarizePhase(op: Op, results: readonly PhaseResult[]): PhaseSummary {
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

/** Computes medians, ratios and targets from the raw records. */
export function summarize(
  runs: readonly RunRecord[],
  lists: readonly ListRecord[],
  micro?: MicroResult,
): Summary {
  const main = mainRows(runs);
  const ratioRows = libraryRatios(runs);
  const list = groupBy(lists, (l) => `${l.valueSize}|${l.backend}|${l.method}`).map((group) => {
    const { backend, method, entries, valueSize } = group[0] as ListRecord;
    const bytesRead = median(group.map((g) => g.bytesRead));
    const ms = median(group.map((g) => g.ms));
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
  const targets = [
    ...operationTargets(ratioRows),
    ...jetStreamListTargets(lists.filter((l) => l.backend === "jetstream")),
    fileListTimeTarget(lists.filter((l) => l.backend === "file")),
    fileListTarget(list, lists),
    ...microTargets(micro?.rows ?? []),
  ];
  return { main, ratios: ratioRows, list, targets };
}

function mainRows(runs: readonly RunRecord[]): MainRow[] {
  const phases = runs.flatMap((run) => run.phases.map((phase) => ({ run, phase })));
  return groupBy(phases, ({ run, phase }) => `${run.keyspace}|${run.target}|${phase.op}`).map(
    (group) => {
      const { run, phase } = group[0] as { run: RunRecord; phase: PhaseSummary };
      const m = (f: (p: PhaseSummary) => number) => median(group.map((g) => f(g.phase)));
      return {
        keyspace: run.keyspace,
        backend: run.backend,
        target: run.target,
        op: phase.op,
        processes: run.processes,
        opsPerSec: m((p) => p.opsPerSec),
        p50Ms: m((p) => p.p50Ms),
        p95Ms: m((p) => p.p95Ms),
        p99Ms: m((p) => p.p99Ms),
        exists: m((p) => p.exists),
        stale: m((p) => p.stale),
        retries: m((p) => p.retries),
        trials: group.length,
      };
    },
  );
}

// Per trial, the library's ops/s over its floor's in the same trial; then the spread.
function libraryRatios(runs: readonly RunRecord[]): RatioRow[] {
  const rows: RatioRow[] = [];
  for (const keyspace of new Set(runs.map((r) => r.keyspace))) {
    for (const backend of BACKENDS) {
      const target: TargetName = backend;
      const baseline: TargetName = `${backend}-raw`;
      for (const op of [...TARGET_OPS, "delete", "counter"] as Op[]) {
        const rate = (trial: number, t: TargetName) =>
          runs.find((r) => r.trial === trial && r.keyspace === keyspace && r.target === t)
            ?.phases.find((p) => p.op === op)?.opsPerSec;
        const trials = [...new Set(runs.map((r) => r.trial))];
        const s = ratios(trials.map((t) => [rate(t, target), rate(t, baseline)]));
        if (s.trials === 0) continue;
        rows.push({
          keyspace,
          backend,
          op,
          target,
          baseline,
          ratio: s.median,
          min: s.min,
          max: s.max,
          trials: s.trials,
        });
      }
    }
  }
  return rows;
}

function operationTargets(rows: readonly RatioRow[]): TargetRow[] {
  return BACKENDS.flatMap((backend) =>
    TARGET_OPS.map((op) => {
      const found = rows.filter((r) => r.backend === backend && r.op === op);
      const min = minRatio(backend, op);
      const goal = op === "read"
        ? `${backend} read time <= ${(1 / min).toFixed(1)}x ${backend}-raw (the floor)`
        : `${backend} ${op} >= ${min}x ${backend}-raw`;
      if (found.length === 0) return { goal, measured: "not measured", met: null };
      // A read target is a time ratio: the inverse of the throughput ratio.
      const spread = (r: RatioRow) =>
        op === "read"
          ? { median: 1 / r.ratio, min: 1 / r.max, max: 1 / r.min }
          : { median: r.ratio, ...r };
      const measured = found.map((r) => fmtSpread(spread(r)).replace("(", `(${r.keyspace}; `));
      return { goal, measured: measured.join(", "), met: found.every((r) => r.ratio >= min) };
    })
  );
}

// Per rep, the time of `over` over that of `under`; then the median.
function listRatio(lists: readonly ListRecord[], over: ListMethod, under: ListMethod): number {
  const ms = (rep: number, m: ListMethod) => lists.find((l) => l.rep === rep && l.method === m)?.ms;
  return ratios([...new Set(lists.map((l) => l.rep))].map((rep) => [ms(rep, over), ms(rep, under)]))
    .median;
}

const sizesOf = (lists: readonly ListRecord[]) =>
  [...new Set(lists.map((l) => l.valueSize))].sort((a, b) => a - b);

// The jetstream list targets are judged at the smallest body size measured (a typical memory);
// larger bodies are reported beside them. With large bodies both a listing and keys()+get() move
// the same bytes, so "keys()+get() ÷ one watch pass" is the most any listing could reach.
function jetStreamListTargets(js: readonly ListRecord[]): TargetRow[] {
  const watchGoal = `jetstream list <= ${MAX_LIST_OVER_WATCH}x one watch pass`;
  const keysGoal = `jetstream list >= ${MIN_KEYS_GET_OVER_LIST}x faster than keys()+get()`;
  const at = (size: number) => js.filter((l) => l.valueSize === size);
  const has = (size: number, m: ListMethod) => at(size).some((l) => l.method === m);
  const sizes = sizesOf(js);
  const judged = sizes[0];
  if (judged === undefined || !has(judged, "jetstream")) {
    return [watchGoal, keysGoal].map((goal) => ({ goal, measured: "not measured", met: null }));
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
  return [
    {
      goal: watchGoal,
      measured: watch.map((w) => `${w.ratio.toFixed(2)}x (${label(w.size)})`).join("; ") ||
        "not measured",
      met: w0 === undefined ? null : w0.ratio <= MAX_LIST_OVER_WATCH,
    },
    {
      goal: keysGoal,
      measured:
        keys.map((k) =>
          `${k.ratio.toFixed(1)}x (${label(k.size)}; a watch pass is ${k.ceiling.toFixed(1)}x)`
        ).join("; ") || "not measured",
      met: k0 === undefined ? null : k0.ratio >= MIN_KEYS_GET_OVER_LIST,
    },
  ];
}

// Judged at the smallest body size measured (a typical memory); larger ones are shown beside it.
function fileListTimeTarget(file: readonly ListRecord[]): TargetRow {
  const goal = `file list <= ${MAX_LIST_OVER_RAW}x the raw pass (directory + first KiB of each)`;
  const at = sizesOf(file).map((size) => ({
    size,
    ratio: listRatio(file.filter((l) => l.valueSize === size), "file", "file-headers"),
  })).filter((r) => Number.isFinite(r.ratio));
  if (at.length === 0) return { goal, measured: "not measured", met: null };
  const entries = file[0]?.entries ?? 0;
  return {
    goal,
    measured: at.map((r) =>
      `${r.ratio.toFixed(2)}x (${entries} entries, ${sizeLabel(r.size)} bodies)`
    ).join("; "),
    met: (at[0] as { ratio: number }).ratio <= MAX_LIST_OVER_RAW,
  };
}

// Judged at the largest body size measured, where reading a body would show most.
function fileListTarget(list: readonly ListRow[], lists: readonly ListRecord[]): TargetRow {
  const goal = "file list reads no bodies (bytes read vs the header-only baseline)";
  const size = Math.max(-1, ...list.filter((l) => l.backend === "file").map((l) => l.valueSize));
  const lib = list.find((l) => l.method === "file" && l.valueSize === size);
  const headers = list.find((l) => l.method === "file-headers" && l.valueSize === size);
  if (lib === undefined || headers === undefined) {
    return { goal, measured: "not measured", met: null };
  }
  const r = listRatio(lists.filter((l) => l.valueSize === size), "file", "file-headers");
  const time = `${r.toFixed(2)}x the baseline's time`;
  if (lib.bytesRead < 0 || headers.bytesRead < 0) {
    return { goal, measured: `bytes read unknown (no /proc/self/io); ${time}`, met: null };
  }
  const perEntry = (l: ListRow) => `${Math.round(l.bytesPerEntry)} B/entry`;
  return {
    goal,
    measured: `${perEntry(lib)} vs ${perEntry(headers)} with ${sizeLabel(size)} bodies; ${time}`,
    met: lib.bytesRead <= headers.bytesRead * MAX_LIST_BYTES_OVER_HEADERS &&
      lib.bytesPerEntry < lib.valueSize,
  };
}

// The 16-in-flight targets are judged against today's library run in the same trial, or, without
// git to extract it, against the number recorded in bench/reference.json.
function microTargets(rows: readonly MicroRow[]): TargetRow[] {
  const reference = rows.some((r) => r.section.startsWith("inflight"))
    ? JSON.parse(Deno.readTextFileSync(REFERENCE)) as { median: Record<string, number> }
    : undefined;
  return rows.map((r) => {
    const spread = fmtSpread(r.ratio);
    if (r.section === "exists") {
      const goal = `${r.backend} create of an existing key <= 1.5x a read`;
      return { goal, measured: spread, met: r.ratio.median <= 1.5 };
    }
    if (r.section === "capacity") {
      return {
        goal: `${r.backend} exact capacity adds <= 10% to a create at 1,000 entries`,
        measured: `${spread} of the empty store's ratio to raw`,
        met: r.ratio.median <= 1.1,
      };
    }
    if (r.section === "rbu") {
      const off = (r.values["update, option off"] as number) / (r.values["raw update"] as number);
      return {
        goal: "file update with readBeforeUpdate: true, against the raw durable update",
        measured: `${spread}; with the option off ${off.toFixed(2)}x`,
        met: null,
      };
    }
    const op = r.section.slice("inflight ".length);
    const fixed = (r.values["library"] as number) / (reference?.median[op] as number);
    const live = r.ratio.of.endsWith("today's library");
    return {
      goal: `file ${op}, 16 in flight, >= 1.5x today's library`,
      measured: `${live ? `${spread}; ` : ""}${fixed.toFixed(2)}x the recorded reference`,
      met: (live ? r.ratio.median : fixed) >= 1.5,
    };
  });
}
