// Scope budgets: what `new Scope({ budget })` accepts, what its snapshots keep, and that an older
// snapshot still restores. The budget's effect on writes is in tests/conformance_gate.ts.

import assert from "node:assert/strict";
import fc from "fast-check";
import { ConfigError, latestScope, Scope, SCOPE_SNAPSHOT_KIND } from "../../mod.ts";

Deno.test("new Scope({ budget }) refuses a budget that is no pair of non-negative whole numbers", () => {
  const cases: Array<[unknown, RegExp]> = [
    [
      { writes: -1 },
      /field "writes" must be a whole number of at least 0 \(0 allows none\), got -1/,
    ],
    [{ deletes: 1.5 }, /field "deletes" must be a whole number.*got 1\.5/],
    [{ writes: NaN }, /got NaN/],
    [{ writes: Infinity }, /got Infinity/],
    [{ writes: "3" }, /got a string/],
    [{ writes: Number.MAX_SAFE_INTEGER + 1 }, /must be a whole number/],
    [{ writs: 3 }, /unknown field "writs"; it takes \{ writes\?, deletes\? \}/],
    [[3], /must be an object, got an array/],
    [5, /must be an object, got the number 5/],
    [null, /must be an object, got null/],
    [new Map(), /must be a plain object/],
  ];
  for (const [budget, message] of cases) {
    assert.throws(
      () => new Scope({ budget: budget as { writes: number } }),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError, String(e));
        assert.match(e.message, /^Cannot make a scope: option "budget" /);
        assert.match(e.message, message);
        return true;
      },
      JSON.stringify(budget),
    );
  }
});

Deno.test("new Scope({ budget }) takes any non-negative whole numbers, and none is no limit", () => {
  fc.assert(
    fc.property(
      fc.record({ writes: fc.nat(), deletes: fc.nat() }, { requiredKeys: [] }),
      (budget) => {
        const scope = new Scope({ budget });
        assert.deepEqual(scope.budget, { ...budget });
        assert.deepEqual(scope.used, { writes: 0, deletes: 0 });
        const restored = Scope.restore(JSON.parse(JSON.stringify(scope.snapshot())));
        assert.deepEqual([restored.budget, restored.used], [{ ...budget }, scope.used]);
      },
    ),
  );
  const free = new Scope();
  assert.equal(free.budget, undefined);
  assert.equal(free.used, undefined);
  assert.equal("budget" in free.snapshot(), false);
});

Deno.test("Scope.restore() refuses a snapshot whose budget or count is malformed", () => {
  const base = { ...new Scope({ run: "r" }).snapshot() };
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ ...base, budget: { writes: -2 } }, /"budget" field "writes" must be a whole number/],
    [{ ...base, budget: { writes: 2 }, used: { writes: "1" } }, /"used" field "writes"/],
    [{ ...base, used: { writes: 1, deletes: 0 } }, /"used" is given without a "budget"/],
    [{ ...base, version: 2, budget: { writes: 1 } }, /unknown field "budget"/],
  ];
  for (const [record, message] of cases) {
    assert.throws(() => Scope.restore(record), (e: unknown) => {
      assert.ok(e instanceof ConfigError, String(e));
      assert.match(e.message, message);
      return true;
    });
  }
});

Deno.test("Scope.restore() still reads a version 2 snapshot, from before budgets", () => {
  const old = {
    kind: SCOPE_SNAPSHOT_KIND,
    version: 2,
    run: "run-old",
    tainted: true,
    revisions: { ns: { a: 4 } },
  };
  const scope = Scope.restore(old);
  assert.deepEqual([scope.run, scope.tainted, scope.revision("ns", "a")], ["run-old", true, 4]);
  assert.equal(scope.budget, undefined);
  assert.equal(latestScope([old]).run, "run-old");
});
