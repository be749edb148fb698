// The gate's rules every backend keeps (part of the one conformance suite): a run's budget,
// counted across every write path and kept by snapshots, refusing before storage is touched.
// Registered by `conformance()`.

import assert from "node:assert/strict";
import { BudgetError, ExistsError, history, MemoryError, Scope } from "../mod.ts";
import type { Fixture } from "./_lib/fixture.ts";

type Register = (name: string, fn: (f: Fixture) => Promise<void>) => void;

function isBudget(kind: "writes" | "deletes", limit: number) {
  return (e: unknown) => {
    assert.ok(e instanceof BudgetError, String(e));
    assert.ok(e instanceof MemoryError);
    assert.equal(e.code, "budget");
    assert.deepEqual([e.kind, e.limit], [kind, limit]);
    const unit = limit === 1 ? kind.slice(0, -1) : kind;
    assert.match(e.message, new RegExp(`this run has used its ${limit} ${unit}\\b`));
    return true;
  };
}

/** Registers the gate cases that hold with history on or off. */
export function gateConformance(test: Register, options: { readonly history: boolean }): void {
  test("gate: a run's budget refuses the write past it before storage is touched", async ({ store, peer }) => {
    const scope = new Scope({ run: "run-budget", budget: { writes: 2, deletes: 1 } });
    await store.create("a", "about a", "1", { scope });
    // A write that writes nothing (the key is taken) does not use the budget.
    await assert.rejects(store.create("a", "about a", "again", { scope }), ExistsError);
    await store.read("a", { scope });
    await store.update("a", "about a", "2", { scope });
    assert.deepEqual(scope.used, { writes: 2, deletes: 0 });
    const before = options.history ? (await history(store, "a")).length : 0;
    await assert.rejects(store.create("b", "about b", "3", { scope }), isBudget("writes", 2));
    await assert.rejects(store.update("a", "about a", "3", { scope }), isBudget("writes", 2));
    assert.deepEqual((await store.list()).map((i) => i.key), ["a"]);
    assert.equal((await store.read("a")).content, "2");
    if (options.history) assert.equal((await history(store, "a")).length, before);
    // Deletes have their own count; a delete of nothing uses none.
    assert.equal(await store.delete("nothing", { scope }), false);
    assert.equal(await store.delete("a", { scope }), true);
    await (await peer()).create("c", "about c", "by another run");
    await assert.rejects(store.delete("c", { scope }), isBudget("deletes", 1));
    assert.deepEqual((await store.list()).map((i) => i.key), ["c"]);
    // Another run, or no scope, is not limited by this run's budget.
    await store.create("d", "about d", "free", { scope: new Scope() });
    await store.create("e", "about e", "free");
  });

  test("gate: a poisoned run that deletes every memory stops at its budget, also after a resume", async ({ store }) => {
    const keys = Array.from({ length: 8 }, (_, i) => `k${i}`);
    for (const key of keys) await store.create(key, `about ${key}`, "kept");
    const bad = new Scope({ run: "run-wiper", tainted: true, budget: { deletes: 3 } });
    const results = await Promise.allSettled(
      keys.slice(0, 2).map((k) => store.delete(k, { scope: bad })),
    );
    assert.ok(results.every((r) => r.status === "fulfilled"));
    // The run is suspended and resumed from its snapshot: the count goes with it.
    const snapshot = JSON.parse(JSON.stringify(bad.snapshot()));
    assert.deepEqual([snapshot.budget, snapshot.used], [{ deletes: 3 }, { writes: 0, deletes: 2 }]);
    const resumed = Scope.restore(snapshot);
    // Concurrent deletes cannot pass the budget together.
    const rest = await Promise.allSettled(
      keys.slice(2).map((k) => store.delete(k, { scope: resumed })),
    );
    assert.equal(rest.filter((r) => r.status === "fulfilled").length, 1);
    for (const r of rest) {
      if (r.status === "rejected") assert.ok(isBudget("deletes", 3)(r.reason));
    }
    assert.equal((await store.list()).length, keys.length - 3);
    // Writes are not limited by a budget of deletes only.
    await store.create("note", "about note", "written", { scope: resumed });
  });
}
