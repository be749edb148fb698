// The benchmark's invariants, checked after every phase of a run: one create winner per key, one
// delete winner per key, the store lists exactly the keys written, no lost increment, no torn
// read. A broken one fails the run.

import type { WorkerPool } from "./_pool.ts";
import type { Op, PhaseResult, SnapshotResult } from "./_protocol.ts";

/** The key every counter phase increments. */
export const COUNTER_KEY = "counter";

/** Where checks are counted and violations collected. */
export interface Checks {
  checks: number;
  readonly violations: string[];
}

/** Checks one phase's invariants; a broken one is recorded in `ctx` and printed at once. */
export async function checkPhase(
  ctx: Checks,
  pool: WorkerPool,
  where: string,
  op: Op,
  results: readonly PhaseResult[],
  all: readonly string[],
): Promise<void> {
  const fail = (message: string) => {
    ctx.violations.push(`${where}, ${op}: ${message}`);
    console.error(`\n!!! INVARIANT BROKEN in ${where}, ${op}: ${message}`);
  };
  const check = (ok: boolean, message: () => string) => {
    ctx.checks++;
    if (!ok) fail(message());
  };
  const n = results.length;
  if (op === "create" || op === "delete") {
    // Exactly one winner per key: the one create that linked / the one delete that saw it.
    const winners = new Map<string, number>();
    for (const r of results) {
      for (const key of r.won) winners.set(key, (winners.get(key) ?? 0) + 1);
    }
    const twice = [...winners].filter(([, count]) => count > 1).map(([key]) => key);
    const none = all.filter((key) => !winners.has(key));
    check(
      twice.length === 0,
      () =>
        `${twice.length} key(s) had more than one ${op} winner, e.g. "${twice[0]}" won ${
          winners.get(twice[0] as string)
        } times`,
    );
    check(
      none.length === 0,
      () => `${none.length} key(s) had no ${op} winner, e.g. "${none[0]}"`,
    );
    if (op === "create") {
      const exists = results.reduce((s, r) => s + r.exists, 0);
      const attempts = results.reduce((s, r) => s + r.latencies.length, 0);
      check(
        exists === attempts - all.length,
        () => `${exists} creates reported "exists", expected ${attempts - all.length}`,
      );
    }
    const snapshot = await pool.one<SnapshotResult>(0, { cmd: "snapshot", keys: [] });
    const expected = op === "create" ? [...all].sort() : [];
    const present = snapshot.keys.filter((k) => k !== COUNTER_KEY);
    check(
      sameKeys(present, expected),
      () =>
        `after ${op} the store lists ${present.length} key(s), expected ${expected.length}${
          diffHint(present, expected)
        }`,
    );
  } else if (op === "read") {
    const bad = results.reduce((s, r) => s + r.badReads, 0);
    check(bad === 0, () => `${bad} read(s) returned an entry no writer wrote (torn or truncated)`);
  } else if (op === "counter") {
    const increments = results.reduce((s, r) => s + r.latencies.length, 0);
    const snapshot = await pool.one<SnapshotResult>(0, { cmd: "snapshot", keys: [COUNTER_KEY] });
    const value = snapshot.values[COUNTER_KEY];
    check(
      value === String(increments),
      () =>
        `lost increment: the counter holds ${value} after ${increments} increments by ${n} processes`,
    );
  }
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((k) => set.has(k));
}

function diffHint(present: readonly string[], expected: readonly string[]): string {
  const p = new Set(present);
  const e = new Set(expected);
  const missing = expected.find((k) => !p.has(k));
  const extra = present.find((k) => !e.has(k));
  return `${missing ? `; missing "${missing}"` : ""}${extra ? `; unexpected "${extra}"` : ""}`;
}
