// The benchmark's results: the JSON document `--json` writes (a `Results`) and BENCH.md is
// rendered from. Types only; bench/_summary.ts computes the summary from the records.

import type { Keyspace } from "./_args.ts";
import type { Backend, ListMethod, Op, TargetName } from "./_protocol.ts";
import type { Spread } from "./_stats.ts";

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

/** Medians over trials of one target's operation (the counts too). */
export type MainRow = Omit<PhaseSummary, "operations" | "wallMs"> & {
  readonly keyspace: Keyspace;
  readonly backend: Backend;
  readonly target: TargetName;
  readonly processes: number;
  readonly trials: number;
};

/** The library's throughput over its floor's: the spread of per-trial ratios. */
export interface RatioRow {
  readonly keyspace: Keyspace;
  readonly backend: Backend;
  readonly op: Op;
  readonly target: TargetName;
  readonly baseline: TargetName;
  readonly ratio: number;
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

/** A speed target and whether this run met it (`null`: not measured, or reported only). */
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

/** One row of bench/micro.ts: medians over trials (µs per op, or ops/s) and the ratio's spread. */
export interface MicroRow {
  readonly section: string;
  readonly backend: Backend;
  readonly unit: "µs/op" | "ops/s";
  readonly values: Record<string, number>;
  readonly ratio: Omit<Spread, "trials"> & { readonly of: string };
}

/** What bench/micro.ts measured. */
export interface MicroResult {
  readonly rows: MicroRow[];
  readonly notes: string[];
}

/** ops/s of one operation of one peer at one size and process count. */
export interface PeerRow {
  readonly system: string;
  readonly n: number;
  readonly processes: number;
  readonly op: string;
  readonly opsPerSec: number;
  /** Entries a listing saw after the create phase (a lost create shows as fewer than n). */
  readonly kept?: number;
  /** Reads, updates or deletes that failed (of a key a lost create never wrote). */
  readonly failed: number;
  /** Passes this row is the median of. */
  readonly trials?: number;
}

/** One peer's lost-update count. */
export interface LostRow {
  readonly system: string;
  readonly processes: number;
  readonly increments: number;
  readonly final: number;
  readonly lost: number;
  readonly retries: number;
}

/** What bench/peers.ts measured. */
export interface PeersResult {
  readonly rows: PeerRow[];
  readonly lost: LostRow[];
  readonly notes: string[];
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
  readonly micro?: MicroResult | undefined;
  readonly peers?: PeersResult | undefined;
}
