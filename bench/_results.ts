// The benchmark's results: the JSON document `--json` writes and BENCH.md is rendered from. Each
// part's type lives with the code that makes it.

import type { Machine } from "./_machine.ts";
import type { ListRecord, RunRecord, Summary } from "./_summary.ts";
import type { MicroResult } from "./micro.ts";
import type { PeersResult } from "./peers.ts";

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
  /** Medians, ratios and targets, recomputed from the records whenever BENCH.md is rendered. */
  readonly summary: Summary;
  readonly micro?: MicroResult | undefined;
  readonly peers?: PeersResult | undefined;
}
