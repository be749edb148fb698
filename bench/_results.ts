// The benchmark's results: what each run measured, and the summary (medians, ratios, targets)
// computed from it. The JSON written by `--json` is a `Results`; BENCH.md is rendered from it.

import type { Keyspace } from "./_args.ts";
import type { Backend, ListMethod, Op, TargetName } from "./_protocol.ts";
import type { MicroResult } from "./micro.ts";
import type { PeersResult } from "./peers.ts";
import { median } from "./_stats.ts";

/** One phase of one run, every worker merged. */
export interface PhaseSummary {
  readonly op: Op;
  readonly operations: number;
  readonly wallMs: number;
  readonly opsPerSec: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly exists: number;
  readonly stale: number;
  readonly retries: number;
}

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

/** Where the numbers came from. */
export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly os: string;
  readonly deno: string;
  readonly v8: string;
  readonly natsServer: string;
  readonly loadAverage: readonly number[];
}

/** Medians over trials of one target's operation. */
export interface MainRow {
  readonly keyspace: Keyspace;
  readonly backend: Backend;
  readonly target: TargetName;
  readonly op: Op;
  readonly processes: number;
  readonly opsPerSec: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly exists: number;
  readonly stale: number;
  readonly retries: number;
  readonly trials: number;
}

/** The library's throughput over a baseline's, the median of per-trial ratios. */
export interface RatioRow {
  readonly keyspace: Keyspace;
  readonly backend: Backend;
  readonly op: Op;
  readonly target: TargetName;
  readonly baseline: TargetName;
  readonly ratio: number;
  /** The lowest and highest per-trial ratio: how much the machine's noise moves one trial. */
  readonly min: number;
  readonly max: number;
  readonly trials: number;
}

/** Medians of one listing method. */
export interface ListRow {
  readonly backend: Backend;
  readonly method: ListMethod;
  readonly ms: number;
  readonly bytesRead: number;
  readonly bytesPerEntry: number;
  readonly entries: number;
  readonly valueSize: number;
  readonly reps: number;
}

/** A speed target and whether this run met it (`null`: not measured). */
export interface TargetRow {
  readonly goal: string;
  readonly measured: string;
  readonly met: boolean | null;
}

/** Everything computed from the runs. */
export interface Summary {
  readonly main: MainRow[];
  readonly ratios: RatioRow[];
  readonly list: ListRow[];
  readonly targets: TargetRow[];
}

/** The JSON document `--json` writes. */
export interface Results {
  readonly schema: 1;
  readonly command: string;
  readonly startedAt: string;
  readonly durationMs: number;
  readonly machine: Machine;
  readonly config: Record<string, unknown>;
  readonly runs: RunRecord[];
  readonly lists: ListRecord[];
  readonly invariants: { readonly checks: number; readonly violations: string[] };
  readonly notes: string[];
  readonly summary: Summary;
  /** bench/micro.ts: exists-create, capacity, readBeforeUpdate, 16 in flight. */
  readonly micro?: MicroResult | undefined;
  /** bench/peers.ts: the peers and lost-update tables. */
  readonly peers?: PeersResult | undefined;
}

/** Library target → the baselines it is compared with (the first carries the target). */
export const BASELINES: Record<Backend, { target: TargetName; baselines: TargetName[] }> = {
  file: { target: "file", baselines: ["file-raw"] },
  jetstream: { target: "jetstream", baselines: ["jetstream-raw"] },
};

/** The throughput a library operation must reach against its raw baseline (a time ratio's inverse). */
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

const TARGET_OPS: readonly Op[] = ["create", "update", "read"];

/** Computes medians, ratios and targets from the raw records. */
export function summarize(
  runs: readonly RunRecord[],
  lists: readonly ListRecord[],
  more: readonly TargetRow[] = [],
): Summary {
  const main = mainRows(runs.filter((r) => r.section === "main"));
  const ratios = ratioRows(runs.filter((r) => r.section === "main"));
  const list = listRows(lists);
  return { main, ratios, list, targets: [...targetRows(ratios, list, lists), ...more] };
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group === undefined) groups.set(k, [item]);
    else group.push(item);
  }
  return groups;
}

function mainRows(runs: readonly RunRecord[]): MainRow[] {
  const phases = runs.flatMap((run) => run.phases.map((phase) => ({ run, phase })));
  const groups = groupBy(phases, ({ run, phase }) => `${run.keyspace}|${run.target}|${phase.op}`);
  return [...groups.values()].map((group) => {
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
  });
}

function ratioRows(runs: readonly RunRecord[]): RatioRow[] {
  const rows: RatioRow[] = [];
  const keyspaces = [...new Set(runs.map((r) => r.keyspace))];
  for (const keyspace of keyspaces) {
    for (const backend of Object.keys(BASELINES) as Backend[]) {
      const { target, baselines } = BASELINES[backend];
      for (const baseline of baselines) {
        for (const op of [...TARGET_OPS, "delete", "counter"] as Op[]) {
          const perTrial: number[] = [];
          for (const trial of new Set(runs.map((r) => r.trial))) {
            const rate = (t: TargetName) =>
              runs.find((r) => r.trial === trial && r.keyspace === keyspace && r.target === t)
                ?.phases.find((p) => p.op === op)?.opsPerSec;
            const lib = rate(target);
            const base = rate(baseline);
            if (lib !== undefined && base !== undefined && base > 0) perTrial.push(lib / base);
          }
          if (perTrial.length > 0) {
            rows.push({
              keyspace,
              backend,
              op,
              target,
              baseline,
              ratio: median(perTrial),
              min: Math.min(...perTrial),
              max: Math.max(...perTrial),
              trials: perTrial.length,
            });
          }
        }
      }
    }
  }
  return rows;
}

function listRows(lists: readonly ListRecord[]): ListRow[] {
  const groups = groupBy(lists, (l) => `${l.valueSize}|${l.backend}|${l.method}`);
  return [...groups.values()].map((group) => {
    const first = group[0] as ListRecord;
    const bytesRead = median(group.map((g) => g.bytesRead));
    return {
      backend: first.backend,
      method: first.method,
      ms: median(group.map((g) => g.ms)),
      bytesRead,
      bytesPerEntry: bytesRead / first.entries,
      entries: first.entries,
      valueSize: first.valueSize,
      reps: group.length,
    };
  });
}

// Per-rep ratio of two listing methods, then the median.
function listRatio(lists: readonly ListRecord[], over: ListMethod, under: ListMethod): number {
  const ratios: number[] = [];
  for (const rep of new Set(lists.map((l) => l.rep))) {
    const a = lists.find((l) => l.rep === rep && l.method === over)?.ms;
    const b = lists.find((l) => l.rep === rep && l.method === under)?.ms;
    if (a !== undefined && b !== undefined && b > 0) ratios.push(a / b);
  }
  return median(ratios);
}

function targetRows(
  ratios: readonly RatioRow[],
  list: readonly ListRow[],
  lists: readonly ListRecord[],
): TargetRow[] {
  const rows: TargetRow[] = [];
  for (const backend of Object.keys(BASELINES) as Backend[]) {
    const { target, baselines } = BASELINES[backend];
    const baseline = baselines[0] as TargetName;
    for (const op of TARGET_OPS) {
      const found = ratios.filter((r) =>
        r.backend === backend && r.op === op && r.baseline === baseline
      );
      const min = minRatio(backend, op);
      const goal = op === "read"
        ? `${target} read time <= ${(1 / min).toFixed(1)}x ${baseline} (the floor)`
        : `${target} ${op} >= ${min}x ${baseline}`;
      if (found.length === 0) {
        rows.push({ goal, measured: "not measured", met: null });
        continue;
      }
      rows.push({
        goal,
        measured: found.map((r) =>
          op === "read"
            ? `${(1 / r.ratio).toFixed(2)}x (${r.keyspace}; trials ${(1 / r.max).toFixed(2)}–${
              (1 / r.min).toFixed(2)
            })`
            : `${r.ratio.toFixed(2)}x (${r.keyspace}; trials ${r.min.toFixed(2)}–${
              r.max.toFixed(2)
            })`
        ).join(", "),
        met: found.every((r) => r.ratio >= min),
      });
    }
  }
  rows.push(...jetStreamListTargets(lists.filter((l) => l.backend === "jetstream")));
  rows.push(fileListTimeTarget(lists), fileListTarget(list, lists));
  return rows;
}

// The jetstream list targets are judged at the smallest body size measured (a typical memory);
// larger bodies are reported beside them. With large bodies both a listing and keys()+get() move
// the same bytes, so "keys()+get() ÷ one watch pass" is the most any listing could reach.
function jetStreamListTargets(js: readonly ListRecord[]): TargetRow[] {
  const sizes = [...new Set(js.map((l) => l.valueSize))].sort((a, b) => a - b);
  const at = (size: number) => js.filter((l) => l.valueSize === size);
  const has = (size: number, m: ListMethod) => at(size).some((l) => l.method === m);
  const watchGoal = `jetstream list <= ${MAX_LIST_OVER_WATCH}x one watch pass`;
  const keysGoal = `jetstream list >= ${MIN_KEYS_GET_OVER_LIST}x faster than keys()+get()`;
  const judged = sizes[0];
  if (judged === undefined || !has(judged, "jetstream")) {
    return [
      { goal: watchGoal, measured: "not measured", met: null },
      { goal: keysGoal, measured: "not measured", met: null },
    ];
  }
  const watch = sizes.filter((s) => has(s, "jetstream-watch")).map((s) => ({
    size: s,
    ratio: listRatio(at(s), "jetstream", "jetstream-watch"),
  }));
  const keys = sizes.filter((s) => has(s, "jetstream-keys-get")).map((s) => ({
    size: s,
    ratio: listRatio(at(s), "jetstream-keys-get", "jetstream"),
    ceiling: has(s, "jetstream-watch")
      ? listRatio(at(s), "jetstream-keys-get", "jetstream-watch")
      : NaN,
  }));
  const w0 = watch.find((w) => w.size === judged);
  const k0 = keys.find((k) => k.size === judged);
  return [
    {
      goal: watchGoal,
      measured:
        watch.map((w) =>
          `${w.ratio.toFixed(2)}x (${sizeLabel(w.size)} bodies${w.size === judged ? "" : ", info"})`
        ).join("; ") || "not measured",
      met: w0 === undefined ? null : w0.ratio <= MAX_LIST_OVER_WATCH,
    },
    {
      goal: keysGoal,
      measured:
        keys.map((k) =>
          `${k.ratio.toFixed(1)}x (${sizeLabel(k.size)} bodies${
            k.size === judged ? "" : ", info"
          }; a watch pass is ${k.ceiling.toFixed(1)}x)`
        ).join("; ") || "not measured",
      met: k0 === undefined ? null : k0.ratio >= MIN_KEYS_GET_OVER_LIST,
    },
  ];
}

// Judged at the smallest body size measured (a typical memory); larger ones are shown beside it.
function fileListTimeTarget(lists: readonly ListRecord[]): TargetRow {
  const file = lists.filter((l) => l.backend === "file");
  const sizes = [...new Set(file.map((l) => l.valueSize))].sort((a, b) => a - b);
  const goal = `file list <= ${MAX_LIST_OVER_RAW}x the raw pass (directory + first KiB of each)`;
  const at = sizes.map((size) => ({
    size,
    ratio: listRatio(file.filter((l) => l.valueSize === size), "file", "file-headers"),
  })).filter((r) => Number.isFinite(r.ratio));
  if (at.length === 0) return { goal, measured: "not measured", met: null };
  const entries = file[0]?.entries ?? 0;
  return {
    goal,
    measured: at.map((r) =>
      `${r.ratio.toFixed(2)}x (${entries} entries, ${sizeLabel(r.size)} bodies)`
    )
      .join("; "),
    met: at[0]!.ratio <= MAX_LIST_OVER_RAW,
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
  return {
    goal,
    measured: `${Math.round(lib.bytesPerEntry)} B/entry vs ${
      Math.round(headers.bytesPerEntry)
    } B/entry with ${sizeLabel(size)} bodies; ${time}`,
    met: lib.bytesRead <= headers.bytesRead * MAX_LIST_BYTES_OVER_HEADERS &&
      lib.bytesPerEntry < lib.valueSize,
  };
}

/** 1024 → "1 KiB", 65536 → "64 KiB", 100 → "100 B". */
export function sizeLabel(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} B`;
}
