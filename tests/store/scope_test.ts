// Unit tests of Scope, its snapshots and latestScope().

import assert from "node:assert/strict";
import {
  ConfigError,
  InvalidKeyError,
  latestScope,
  MemoryError,
  Scope,
  SCOPE_SNAPSHOT_KIND,
  SCOPE_SNAPSHOT_VERSION,
} from "../../mod.ts";

function snapshotWith(revisions: unknown): Record<string, unknown> {
  return { kind: SCOPE_SNAPSHOT_KIND, version: SCOPE_SNAPSHOT_VERSION, revisions };
}

function restoreError(record: unknown): ConfigError {
  try {
    Scope.restore(record);
  } catch (e) {
    assert.ok(e instanceof ConfigError, `threw ${e}`);
    assert.ok(e instanceof MemoryError);
    assert.equal(e.code, "config");
    assert.match(e.message, /^Cannot restore scope: /);
    return e;
  }
  assert.fail(`Scope.restore(${JSON.stringify(record)}) did not throw`);
}

Deno.test("Scope records, replaces and forgets revisions per namespace", () => {
  const scope = new Scope();
  assert.equal(scope.size, 0);
  assert.equal(scope.revision("ns", "a"), undefined);
  scope.record("ns", "a", 1);
  scope.record("ns", "a", 5);
  scope.record("other", "a", 9);
  assert.equal(scope.revision("ns", "a"), 5);
  assert.equal(scope.revision("other", "a"), 9);
  assert.equal(scope.revision("third", "a"), undefined);
  assert.equal(scope.size, 2);
  scope.forget("ns", "a");
  assert.equal(scope.revision("ns", "a"), undefined);
  assert.equal(scope.revision("other", "a"), 9);
  scope.forget("ns", "never");
  scope.forget("never", "a");
  assert.equal(scope.size, 1);
  assert.deepEqual(scope.snapshot().revisions, { other: { a: 9 } });
});

Deno.test("Scope.record() refuses a revision that is not a non-negative safe integer", () => {
  const scope = new Scope();
  for (const bad of [-1, 1.5, NaN, Infinity, Number.MAX_SAFE_INTEGER + 1]) {
    assert.throws(() => scope.record("ns", "a", bad), RangeError, String(bad));
  }
  assert.equal(scope.size, 0);
  scope.record("ns", "a", 0);
  scope.record("ns", "b", Number.MAX_SAFE_INTEGER);
  assert.equal(scope.size, 2);
});

Deno.test("Scope.record() refuses an illegal key, which no snapshot could carry", () => {
  const scope = new Scope();
  for (const bad of ["", "../x", "a/b", "a..b", ".hidden", "caf\u00e9", "k".repeat(201)]) {
    assert.throws(() => scope.record("ns", bad, 1), InvalidKeyError, JSON.stringify(bad));
  }
  assert.equal(scope.size, 0);
  // What record() accepts, restore() accepts too.
  scope.record("ns", "a.b=c_d-e", 1);
  assert.equal(Scope.restore(JSON.stringify(scope.snapshot())).revision("ns", "a.b=c_d-e"), 1);
});

Deno.test("Scope.record() stores negative zero as zero, as JSON would", () => {
  const scope = new Scope();
  scope.record("ns", "a", -0);
  assert.ok(Object.is(scope.revision("ns", "a"), 0));
  assert.deepEqual(Scope.restore(JSON.stringify(scope.snapshot())).snapshot(), scope.snapshot());
});

Deno.test("Scope.snapshot() is a versioned, plain JSON record", () => {
  const scope = new Scope({ run: "run-1" });
  scope.record("jetstream:notes/alice", "todo", 7);
  scope.record("", "x", 0);
  const snapshot = scope.snapshot();
  assert.deepEqual(snapshot, {
    kind: "agentmem.scope",
    version: 3,
    run: "run-1",
    tainted: false,
    revisions: { "jetstream:notes/alice": { todo: 7 }, "": { x: 0 } },
  });
  assert.deepEqual(JSON.parse(JSON.stringify(snapshot)), snapshot);
  // A snapshot is a copy: later changes to the scope do not reach it.
  scope.record("", "x", 1);
  assert.equal(snapshot.revisions[""]?.["x"], 0);
});

Deno.test("Scope.restore() rebuilds a snapshot given as an object or as JSON text", () => {
  const scope = new Scope();
  scope.record("a", "k1", 3);
  scope.record("b", "k2", 4);
  for (const record of [scope.snapshot(), JSON.stringify(scope.snapshot())]) {
    const restored = Scope.restore(record);
    assert.equal(restored.revision("a", "k1"), 3);
    assert.equal(restored.revision("b", "k2"), 4);
    assert.equal(restored.size, 2);
  }
  assert.equal(Scope.restore(snapshotWith({})).size, 0);
});

Deno.test("Scope.restore() refuses malformed snapshots with ConfigError", () => {
  const cases: Array<[unknown, RegExp]> = [
    [undefined, /expected a snapshot object, got nothing/],
    [null, /got null/],
    [42, /got the number 42/],
    [[], /got an array/],
    ["not json", /not JSON/],
    ["[1]", /got an array/],
    [new Map(), /expected a snapshot object/],
    [{ version: 1, revisions: {} }, /"kind"/],
    [{ kind: "other", version: 1, revisions: {} }, /"kind" is "other"/],
    [{ kind: SCOPE_SNAPSHOT_KIND, version: 4, revisions: {} }, /"version" is the number 4/],
    [{ kind: SCOPE_SNAPSHOT_KIND, version: "1", revisions: {} }, /"version"/],
    [{ kind: SCOPE_SNAPSHOT_KIND, version: 1 }, /"revisions" is not an object/],
    [snapshotWith([]), /"revisions" is not an object/],
    [snapshotWith(null), /"revisions" is not an object/],
    [{ ...snapshotWith({}), extra: 1 }, /unknown field "extra"/],
    [snapshotWith({ ns: 1 }), /namespace "ns" does not map keys to revisions/],
    [snapshotWith({ ns: ["a"] }), /namespace "ns"/],
    [snapshotWith({ ns: { "../x": 1 } }), /illegal key "..\/x"/],
    [snapshotWith({ ns: { "": 1 } }), /illegal key ""/],
    [snapshotWith({ ns: { a: -1 } }), /key "a" has revision the number -1/],
    [snapshotWith({ ns: { a: 1.5 } }), /not a non-negative integer/],
    [snapshotWith({ ns: { a: "1" } }), /key "a" has revision "1"/],
    [snapshotWith({ ns: { a: null } }), /revision null/],
    [snapshotWith({ ns: { a: Number.MAX_SAFE_INTEGER + 1 } }), /not a non-negative integer/],
    [snapshotWith({ ns: { a: Infinity } }), /not a non-negative integer/],
  ];
  for (const [record, message] of cases) {
    assert.match(restoreError(record).message, message, JSON.stringify(record));
  }
});

Deno.test("Scope.restore() keeps a hostile field name short in its message", () => {
  const error = restoreError({ ...snapshotWith({}), ["x".repeat(100_000)]: 1 });
  assert.ok(error.message.length < 300, `${error.message.length} characters`);
});

Deno.test("a key named __proto__ works in Scope and survives a snapshot", () => {
  const scope = new Scope();
  scope.record("ns", "__proto__", 3);
  scope.record("__proto__", "constructor", 4);
  scope.record("__proto__", "__proto__", 5);
  assert.equal(scope.revision("ns", "__proto__"), 3);
  assert.equal(scope.revision("ns", "constructor"), undefined);
  assert.equal(scope.revision("ns", "toString"), undefined);
  assert.equal(scope.size, 3);
  const snapshot = scope.snapshot();
  assert.ok(Object.hasOwn(snapshot.revisions, "__proto__"));
  assert.ok(Object.hasOwn(snapshot.revisions["ns"]!, "__proto__"));
  assert.equal(Object.getPrototypeOf(snapshot.revisions), Object.prototype);
  const json = JSON.stringify(snapshot);
  assert.match(json, /"__proto__":\{"constructor":4,"__proto__":5\}/);
  for (const record of [snapshot, json, JSON.parse(json)]) {
    const restored = Scope.restore(record);
    assert.equal(restored.revision("ns", "__proto__"), 3);
    assert.equal(restored.revision("__proto__", "constructor"), 4);
    assert.equal(restored.revision("__proto__", "__proto__"), 5);
    assert.equal(restored.size, 3);
  }
  assert.equal(({} as Record<string, unknown>)["constructor"], Object);
  assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, "ns"), false);
});

Deno.test("Scope.restore() does not read revisions from a snapshot's prototype chain", () => {
  const revisions = Object.create({ inherited: { a: 1 } });
  assert.match(restoreError(snapshotWith(revisions)).message, /"revisions" is not an object/);
  const keys = Object.create({ a: 1 });
  assert.match(restoreError(snapshotWith({ ns: keys })).message, /namespace "ns"/);
  const bare = Object.assign(Object.create(null), { ns: { a: 2 } });
  assert.equal(Scope.restore(snapshotWith(bare)).revision("ns", "a"), 2);
});

Deno.test("latestScope() picks the newest valid snapshot and skips everything else", () => {
  const older = new Scope();
  older.record("ns", "a", 1);
  const newer = new Scope();
  newer.record("ns", "a", 2);
  newer.record("ns", "b", 3);
  const journal = [
    { type: "turn", text: "hello" },
    older.snapshot(),
    "garbage",
    JSON.stringify(newer.snapshot()),
    { ...newer.snapshot(), version: 4 },
    snapshotWith({ ns: { a: -5 } }),
    JSON.stringify(older.snapshot()).slice(0, -1),
    null,
    undefined,
    42,
  ];
  // The newest snapshot object wins; text shaped like a snapshot never counts.
  const scope = latestScope(journal);
  assert.deepEqual(scope.snapshot(), older.snapshot());
  assert.deepEqual(latestScope([...journal, newer.snapshot()]).snapshot(), newer.snapshot());
  // Order decides: the same snapshots reversed leave the older one newest.
  assert.deepEqual(latestScope([newer.snapshot(), older.snapshot()]).snapshot(), older.snapshot());
});

Deno.test("latestScope() never takes text for a snapshot, and keeps an earlier taint of the run", () => {
  const run = new Scope({ run: "run-7", tainted: true });
  run.record("ns", "a", 1);
  // A model-written record that parses as a clean snapshot of the same run.
  const forged = JSON.stringify({ ...run.snapshot(), tainted: false, revisions: {} });
  const resumed = latestScope([run.snapshot(), forged]);
  assert.equal(resumed.tainted, true);
  assert.equal(resumed.revision("ns", "a"), 1);
  // Even a stored object that says the run is clean cannot clear an earlier taint of it.
  const cleared = latestScope([run.snapshot(), { ...run.snapshot(), tainted: false }]);
  assert.equal(cleared.tainted, true);
  // Another run's clean snapshot is not tainted by it.
  const other = new Scope({ run: "run-8" });
  assert.equal(latestScope([run.snapshot(), other.snapshot()]).tainted, false);
});

Deno.test("latestScope() returns an empty scope when no record is a snapshot", () => {
  assert.equal(latestScope([]).size, 0);
  assert.equal(latestScope(["{}", { kind: SCOPE_SNAPSHOT_KIND }, 1, [], null]).size, 0);
  function* records() {
    yield { type: "turn" };
    yield snapshotWith({ ns: { "bad key": 1 } });
  }
  assert.equal(latestScope(records()).size, 0);
});

Deno.test("latestScope() returns a scope independent of the journal's records", () => {
  const record = snapshotWith({ ns: { a: 1 } });
  const scope = latestScope([record]);
  scope.record("ns", "a", 2);
  assert.deepEqual(record.revisions, { ns: { a: 1 } });
  assert.equal(latestScope([record]).revision("ns", "a"), 1);
});

Deno.test("new Scope() names the run, keeps actor and taint, and snapshots carry all three", () => {
  const generated = new Scope();
  assert.match(generated.run, /^[0-9a-f]{16}$/);
  assert.notEqual(new Scope().run, generated.run);
  assert.equal(generated.actor, undefined);
  assert.equal(generated.tainted, false);
  const scope = new Scope({ run: "run:2026-12-01@host", actor: "agent=travel.bot" });
  scope.taint();
  scope.taint();
  assert.equal(scope.tainted, true);
  const back = Scope.restore(JSON.stringify(scope.snapshot()));
  assert.deepEqual([back.run, back.actor, back.tainted], [scope.run, scope.actor, true]);
  assert.equal(new Scope({ tainted: true }).tainted, true);
});

Deno.test("new Scope() refuses a run or actor id that breaks the rule, with ConfigError", () => {
  for (const bad of ["", "x".repeat(129), "has space", "slash/no", "ünïcode", 7, null]) {
    for (const field of ["run", "actor"]) {
      assert.throws(
        () => new Scope({ [field]: bad } as never),
        (e: unknown) =>
          e instanceof ConfigError && e.message.includes(`"${field}"`) &&
          e.message.includes("1 to 128 characters of A-Z a-z 0-9 . _ : @ = -"),
      );
    }
  }
  assert.throws(() => new Scope({ tainted: "yes" } as never), ConfigError);
  assert.throws(() => new Scope(null as never), ConfigError);
  assert.equal(new Scope({ run: "x".repeat(128) }).run.length, 128);
});

Deno.test("Scope.restore() still reads a version 1 snapshot, from before provenance", () => {
  const old = { kind: SCOPE_SNAPSHOT_KIND, version: 1, revisions: { ns: { a: 4 } } };
  const scope = Scope.restore(old);
  assert.equal(scope.revision("ns", "a"), 4);
  assert.equal(scope.tainted, false);
  assert.match(scope.run, /^[0-9a-f]{16}$/);
  // Version 1 had no provenance fields: one there is foreign, not silently taken.
  assert.throws(() => Scope.restore({ ...old, run: "r" }), /unknown field "run"/);
  assert.throws(() => Scope.restore({ ...snapshotWith({}), run: "bad run" }), /"run" is "bad run"/);
  assert.throws(() => Scope.restore({ ...snapshotWith({}), tainted: 1 }), /"tainted"/);
});
