// The benchmark's invariants, checked after every phase of a run: one create winner per key, one
// delete winner per key, the store lists exactly the keys written, no lost increment, no torn
// read. A broken one fails the run. What a run left behind is read through the library.

import type { Store } from "../mod.ts";
import type { PhaseResult } from "./worker.ts";
import type { Op } from "./_protocol.ts";

/** The key every counter phase increments. */
export const COUNTER_KEY = "counter";

/** Where checks are counted and violations collected. */
export type Checks = { checks: number; readonly violations: string[] };

type Phase = { op: Op; results: readonly PhaseResult[]; all: readonly string[] };

/** Checks one phase's invariants against `store`; a broken one is recorded and printed at once. */
export async function checkPhase(ctx: Checks, where: string, phase: Phase, store: Store) {
  const { op, results, all } = phase;
  const check = (ok: boolean, message: () => string) => {
    ctx.checks++;
    if (ok) return;
    ctx.violations.push(`${where}, ${op}: ${message()}`);
    console.error(`\n!!! INVARIANT BROKEN in ${where}, ${op}: ${message()}`);
  };
  const total = (f: (r: PhaseResult) => number) => results.reduce((s, r) => s + f(r), 0);
  if (op === "create" || op === "delete") {
    // Exactly one winner per key: the one create that linked / the one delete that saw it.
    const winners = new Map<string, number>();
    for (const key of results.flatMap((r) => r.won)) winners.set(key, (winners.get(key) ?? 0) + 1);
    const [twice] = [...winners].filter(([, count]) => count > 1);
    const many = [...winners.values()].filter((count) => count > 1).length;
    const none = all.filter((key) => !winners.has(key));
    const eg = `e.g. "${twice?.[0]}" won ${twice?.[1]} times`;
    check(many === 0, () => `${many} key(s) had more than one ${op} winner, ${eg}`);
    check(none.length === 0, () => `${none.length} key(s) had no ${op} winner, e.g. "${none[0]}"`);
    if (op === "create") {
      const exists = total((r) => r.exists);
      const expected = total((r) => r.latencies.length) - all.length;
      check(exists === expected, () => `${exists} creates reported "exists", expected ${expected}`);
    }
    const listed = (await store.list()).map((item) => item.key);
    const present = new Set(listed.filter((k) => k !== COUNTER_KEY));
    const expected = op === "create" ? all : [];
    const missing = expected.find((k) => !present.has(k));
    const extra = [...present].find((k) => !expected.includes(k));
    const hint = [missing && `; missing "${missing}"`, extra && `; unexpected "${extra}"`];
    const lists = `the store lists ${present.size} key(s), expected ${expected.length}`;
    const ok = present.size === expected.length && missing === undefined;
    check(ok, () => `after ${op} ${lists}${hint.filter(Boolean).join("")}`);
  } else if (op === "read") {
    const bad = total((r) => r.badReads);
    check(bad === 0, () => `${bad} read(s) returned an entry no writer wrote (torn or truncated)`);
  } else if (op === "counter") {
    const [increments, processes] = [total((r) => r.latencies.length), results.length];
    const value = (await store.read(COUNTER_KEY)).content;
    const lost =
      `the counter holds ${value} after ${increments} increments by ${processes} processes`;
    check(value === String(increments), () => `lost increment: ${lost}`);
  }
}
