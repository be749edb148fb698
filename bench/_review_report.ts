// The review section of BENCH.md, from bench/review.json (written by bench/review.ts).

import { fmtMs, fmtSpread, table } from "./_format.ts";
import type { Spread } from "./_stats.ts";

// What the store layer's extra time per write makes of a write of `plainMs`.
function layerRatio(r: ReviewResults, plainMs: number): number {
  return 1 + (r.layer.nowUs - r.layer.beforeUs) / 1000 / plainMs;
}

/** One backend's numbers, as bench/review.json holds them. */
export interface ReviewRow {
  readonly backend: string;
  /** Held write time / plain write time, per trial: updates, then creates. */
  readonly heldUpdate: Spread;
  readonly heldCreate: Spread;
  /** A `review: false` store's update / the same through the store layer before the gate. */
  readonly reviewOff: Spread;
  /** ms per op, medians: plain update, held update. */
  readonly plainMs: number;
  readonly heldMs: number;
  /** The client's CPU per update (ms, every thread), held and plain. */
  readonly heldCpuMs?: number;
  readonly plainCpuMs?: number;
  /** Requests per update, held and plain, where the store had a NATS connection of its own. */
  readonly heldRequests?: number;
  readonly plainRequests?: number;
  /** `proposals()` with MAX_PENDING_PROPOSALS pending: median ms. */
  readonly listMs: number;
}

/** What one run measured. */
export interface ReviewResults {
  readonly startedAt: string;
  readonly trials: number;
  readonly ops: number;
  readonly rows: ReviewRow[];
  /**
   * What the store layer itself takes per update (µs, medians), over a backend that does
   * nothing: the library before the gate, and this one with `review: false`.
   */
  readonly layer: { readonly beforeUs: number; readonly nowUs: number };
}

/** The section ("" when bench/review.ts has not run). */
export function reviewSection(): string {
  let r: ReviewResults;
  try {
    r = JSON.parse(Deno.readTextFileSync(new URL("review.json", import.meta.url)));
  } catch {
    return "";
  }
  const judge = (ok: boolean) => ok ? "met" : "**MISSED**";
  // What a missed held update costs beyond a plain one, measured in the same run.
  const why = (x: ReviewRow) =>
    x.heldUpdate.median <= 1.2 || x.heldCpuMs === undefined || x.plainCpuMs === undefined
      ? ""
      : `; in the way: the client's CPU per update, ${fmtMs(x.heldCpuMs)} ms against ${
        fmtMs(x.plainCpuMs)
      } ms${
        x.heldRequests === undefined || x.plainRequests === undefined
          ? ""
          : `, for ${fmtMs(x.heldRequests)} requests against ${
            fmtMs(x.plainRequests)
          } (the look at the key beside the proposal)`
      }`;
  const rows = r.rows.flatMap((x) => [
    [
      `${x.backend}: held update <= 1.2x a plain update`,
      `${fmtSpread(x.heldUpdate)}; ${fmtMs(x.heldMs)} ms against ${fmtMs(x.plainMs)} ms${why(x)}`,
      judge(x.heldUpdate.median <= 1.2),
    ],
    [
      `${x.backend}: held create <= 1.2x a plain create`,
      fmtSpread(x.heldCreate),
      judge(x.heldCreate.median <= 1.2),
    ],
    [
      `${x.backend}: a review: false store's update <= 1.02x the library before the gate`,
      `${layerRatio(r, x.plainMs).toFixed(3)}x (the layer's ${
        fmtMs(r.layer.nowUs - r.layer.beforeUs)
      } µs more on a ${fmtMs(x.plainMs)} ms write); timed directly ${fmtSpread(x.reviewOff)}`,
      judge(layerRatio(r, x.plainMs) <= 1.02),
    ],
    [
      `${x.backend}: proposals() of 1,024 pending${x.backend === "file" ? " <= 50 ms" : ""}`,
      `${fmtMs(x.listMs)} ms`,
      x.backend === "file" ? judge(x.listMs <= 50) : "reported",
    ],
  ]);
  return `### Review (bench/review.ts, \`deno task bench:review\`, ${r.startedAt})\n\n` +
    `${r.trials} trials of ${r.ops} sequential writes of about 1 KiB each, the two sides of a ` +
    "ratio alternating op by op (so both meet the same load); a " +
    "ratio is the median of per-trial ratios. A held write is a tainted run's write on a store " +
    'with `review: "tainted"`; a plain one the same write by a clean run on a store without ' +
    "review. `review: false` is timed against the store layer of the commit before the gate " +
    "(budgets and review; extracted from git) over the same backend operations, without a " +
    "scope: per write, over a backend that does nothing (" +
    `${fmtMs(r.layer.beforeUs)} µs before, ${fmtMs(r.layer.nowUs)} µs now), as a share of a ` +
    "plain write; and timed directly over the same backend operations (a non-durable file " +
    "store, jetstream), where the machine's noise is larger than what is measured.\n\n" +
    table("target|measured|result", rows) + "\n";
}
