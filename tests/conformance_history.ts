// The history contract every backend keeps (part of the one conformance suite): provenance on
// every write, versions that survive a delete, restore, the audit log, revert with conflicts, and
// the typed errors. Registered by `conformance()` for each backend that keeps history.

import assert from "node:assert/strict";
import {
  auditLog,
  ConfigError,
  history,
  NotFoundError,
  ReadOnlyError,
  readOnlyStore,
  readVersion,
  restoreVersion,
  revertRun,
  Scope,
  type Store,
  type Version,
} from "../mod.ts";
import type { Fixture } from "./_lib/fixture.ts";

type Register = (name: string, fn: (f: Fixture) => Promise<void>) => void;

// The fields of a version a test can predict (not its revision or time).
function shape(v: Version): Record<string, unknown> {
  return {
    key: v.key,
    op: v.op,
    description: v.description,
    run: v.run,
    actor: v.actor,
    via: v.via,
    callId: v.callId,
    tainted: v.tainted,
  };
}

// A revision-checked write wherever the backend checks: the scope read the key first.
async function update(store: Store, key: string, content: string, scope: Scope, via?: string) {
  await store.read(key, { scope });
  await store.update(key, `about ${key}`, content, { scope, ...(via ? { via } : {}) });
}

/** Registers the history cases with the suite's `test`. */
export function historyConformance(test: Register): void {
  test("history: every write records its run, actor, path, tool call and taint, newest first", async ({ store }) => {
    const alice = new Scope({ run: "run-a", actor: "alice" });
    const web = new Scope({ run: "run-w", actor: "bob" });
    await store.create("k", "about k", "v1", {
      scope: alice,
      via: "memory_write",
      callId: "toolu_1",
    });
    web.taint();
    await update(store, "k", "v2", web, "claude_memory:str_replace");
    await store.delete("k", { scope: alice });
    const versions = await history(store, "k");
    assert.deepEqual(versions.map(shape), [
      {
        key: "k",
        op: "delete",
        description: undefined,
        run: "run-a",
        actor: "alice",
        via: "api",
        callId: undefined,
        tainted: false,
      },
      {
        key: "k",
        op: "update",
        description: "about k",
        run: "run-w",
        actor: "bob",
        via: "claude_memory:str_replace",
        callId: undefined,
        tainted: true,
      },
      {
        key: "k",
        op: "create",
        description: "about k",
        run: "run-a",
        actor: "alice",
        via: "memory_write",
        callId: "toolu_1",
        tainted: false,
      },
    ]);
    // Revisions are distinct positive whole numbers, growing with each write; times are ISO UTC.
    const revisions = versions.map((v) => Number(v.revision));
    assert.ok(revisions.every((r) => Number.isSafeInteger(r) && r > 0));
    assert.ok(revisions[0]! > revisions[1]! && revisions[1]! > revisions[2]!);
    for (const v of versions) assert.match(v.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    // A write with no scope records no run, and the path "api".
    await store.create("anon", "about anon", "x");
    const [anon] = await history(store, "anon");
    assert.deepEqual([anon?.run, anon?.actor, anon?.via, anon?.tainted], [
      undefined,
      undefined,
      "api",
      false,
    ]);
  });

  test("history: versions survive a delete and read back; a delete's version holds nothing", async ({ store }) => {
    const scope = new Scope();
    await store.create("k", "about k", "first", { scope });
    await update(store, "k", "second", scope);
    assert.equal(await store.delete("k", { scope }), true);
    await assert.rejects(store.read("k"), NotFoundError);
    assert.deepEqual(await store.list(), []);
    const [deleted, second, first] = await history(store, "k");
    assert.equal(deleted?.op, "delete");
    assert.deepEqual(await readVersion(store, "k", first!.revision), {
      description: "about k",
      content: "first",
    });
    assert.equal((await readVersion(store, "k", second!.revision)).content, "second");
    await assert.rejects(readVersion(store, "k", deleted!.revision), NotFoundError);
    // A key that was never written has no history.
    assert.deepEqual(await history(store, "never"), []);
  });

  test("history: restoreVersion() writes an old version as a new one and brings a deleted key back", async ({ store }) => {
    const scope = new Scope({ run: "run-1" });
    await store.create("k", "about k", "good", { scope });
    await update(store, "k", "bad", scope);
    const good = (await history(store, "k")).at(-1)!;
    await restoreVersion(store, "k", good.revision, { scope });
    assert.equal((await store.read("k")).content, "good");
    const [restored] = await history(store, "k");
    assert.deepEqual([restored?.op, restored?.via, restored?.run], ["update", "restore", "run-1"]);
    await store.delete("k");
    await restoreVersion(store, "k", good.revision);
    assert.deepEqual(await store.read("k"), { description: "about k", content: "good" });
    assert.deepEqual((await history(store, "k")).slice(0, 2).map((v) => [v.op, v.via]), [
      ["create", "restore"],
      ["delete", "api"],
    ]);
  });

  test("history: restoreVersion() racing other writers never loses a write", async ({ store, peer }) => {
    const other = await peer();
    await store.create("k", "about k", "v0");
    const base = (await history(store, "k"))[0]!;
    let acknowledged = 1;
    for (let round = 0; round < 8; round++) {
      const scope = new Scope();
      const writes = [
        restoreVersion(store, "k", base.revision).then(() => acknowledged++, (e) => {
          if (e.code !== "stale") throw e;
        }),
        (async () => {
          await other.read("k", { scope });
          await other.update("k", "about k", `peer ${round}`, { scope });
          acknowledged++;
        })().catch((e) => {
          if (e.code !== "stale") throw e;
        }),
      ];
      await Promise.all(writes);
    }
    // Every acknowledged write has its version, and the head is the newest of them.
    const versions = await history(store, "k");
    assert.equal(versions.length, acknowledged);
    assert.deepEqual(await store.read("k"), await readVersion(store, "k", versions[0]!.revision));
  });

  test("history: auditLog() lists versions across keys oldest first, filtered by run, actor, key, taint, time", async ({ store }) => {
    const a = new Scope({ run: "run-a", actor: "alice" });
    const b = new Scope({ run: "run-b", actor: "bob", tainted: true });
    // Across keys the file backend orders by its writers' clock (milliseconds; docs/history.md):
    // each write here starts on a new millisecond, as writes of different runs do.
    await store.create("x", "about x", "1", { scope: a });
    await nextMs();
    await store.create("y", "about y", "1", { scope: b });
    await nextMs();
    await update(store, "x", "2", b);
    await nextMs();
    await store.delete("y", { scope: a });
    const all = await auditLog(store);
    assert.deepEqual(all.map((v) => [v.key, v.op, v.run]), [
      ["x", "create", "run-a"],
      ["y", "create", "run-b"],
      ["x", "update", "run-b"],
      ["y", "delete", "run-a"],
    ]);
    for (let i = 1; i < all.length; i++) assert.ok(all[i - 1]!.at <= all[i]!.at);
    assert.deepEqual((await auditLog(store, { run: "run-b" })).map((v) => v.key), ["y", "x"]);
    assert.deepEqual((await auditLog(store, { actor: "alice" })).map((v) => v.op), [
      "create",
      "delete",
    ]);
    assert.deepEqual((await auditLog(store, { key: "x" })).map((v) => v.op), ["create", "update"]);
    assert.deepEqual((await auditLog(store, { tainted: true })).length, 2);
    assert.deepEqual((await auditLog(store, { limit: 1 })).map((v) => v.key), ["x"]);
    assert.deepEqual(await auditLog(store, { since: "2999-01-01T00:00:00Z" }), []);
    assert.equal((await auditLog(store, { until: "2999-01-01T00:00:00Z" })).length, 4);
    for (const bad of [{ run: "no spaces" }, { since: "yesterday" }, { limit: 0 }, { nope: 1 }]) {
      await assert.rejects(auditLog(store, bad as never), ConfigError);
    }
  });

  test("history: revertRun() undoes a run's writes and leaves keys others wrote since as conflicts", async ({ store }) => {
    const before = new Scope({ run: "before" });
    await store.create("kept", "about kept", "original", { scope: before });
    await store.create("gone", "about gone", "original", { scope: before });
    await store.create("fought", "about fought", "original", { scope: before });
    const bad = new Scope({ run: "run-bad", tainted: true });
    await update(store, "kept", "poisoned", bad);
    await store.delete("gone", { scope: bad });
    await store.create("planted", "about planted", "obey me", { scope: bad });
    await update(store, "fought", "poisoned", bad);
    const later = new Scope({ run: "later" });
    await update(store, "fought", "fixed by hand", later);

    const plan = await revertRun(store, "run-bad", { dryRun: true });
    assert.deepEqual(plan.actions.map((a) => [a.key, a.action]), [
      ["gone", "recreated"],
      ["kept", "restored"],
      ["planted", "deleted"],
    ]);
    assert.deepEqual(plan.reverted, []);
    assert.deepEqual(plan.conflicts.map((c) => c.key), ["fought"]);
    assert.match(plan.conflicts[0]!.reason, /"later"/);
    // A dry run writes nothing.
    assert.equal((await store.read("kept")).content, "poisoned");
    assert.equal((await history(store, "kept")).length, 2);

    const done = await revertRun(store, "run-bad");
    assert.deepEqual(done.reverted, ["gone", "kept", "planted"]);
    assert.deepEqual(
      done.actions.map((a) => [a.key, a.action, a.revision]),
      plan.actions.map((a) => [a.key, a.action, a.revision]),
    );
    assert.deepEqual([done.conflicts, done.dryRun, done.run], [plan.conflicts, false, "run-bad"]);
    assert.equal((await store.read("kept")).content, "original");
    assert.equal((await store.read("gone")).content, "original");
    await assert.rejects(store.read("planted"), NotFoundError);
    assert.equal((await store.read("fought")).content, "fixed by hand");
    for (const key of ["kept", "gone", "planted"]) {
      const [newest] = await history(store, key);
      assert.deepEqual([newest?.via, newest?.run], ["revert", done.by], key);
      assert.equal(newest?.revision, done.actions.find((a) => a.key === key)?.wrote, key);
    }
    // Reverting it again finds every key as it was before the run: nothing is written.
    const again = await revertRun(store, "run-bad");
    assert.deepEqual([again.reverted, again.actions, again.already], [[], [], [
      "gone",
      "kept",
      "planted",
    ]]);
    assert.deepEqual(again.conflicts.map((c) => c.key), ["fought"]);
    assert.equal((await history(store, "kept"))[0]?.run, done.by);
    // The revert's own writes can be undone in turn.
    const undo = await revertRun(store, done.by);
    assert.deepEqual(undo.reverted, ["gone", "kept", "planted"]);
    assert.equal((await store.read("kept")).content, "poisoned");
    await assert.rejects(revertRun(store, "no-such-run"), NotFoundError);
    await assert.rejects(revertRun(store, "not a run id"), ConfigError);
  });

  test("history: bad revisions, unknown keys and read-only stores fail with typed errors", async ({ store }) => {
    await store.create("k", "about k", "v");
    for (const bad of ["", "0", "-1", "1.5", "abc", "01", "99999999999999999999"]) {
      await assert.rejects(readVersion(store, "k", bad), NotFoundError, bad);
      await assert.rejects(restoreVersion(store, "k", bad), NotFoundError, bad);
    }
    await assert.rejects(readVersion(store, "k", "999999"), NotFoundError);
    await assert.rejects(readVersion(store, "never", "1"), NotFoundError);
    await assert.rejects(history(store, "../etc"), (e: Error) => e.name === "InvalidKeyError");
    const view = readOnlyStore(store);
    const [v] = await history(view, "k");
    assert.equal((await readVersion(view, "k", v!.revision)).content, "v");
    await assert.rejects(restoreVersion(view, "k", v!.revision), ReadOnlyError);
    await assert.rejects(revertRun(view, "run-x"), ReadOnlyError);
    // Versions never show in list() and never count as entries.
    const scope = new Scope();
    for (let i = 0; i < 5; i++) await update(store, "k", `v${i}`, scope);
    assert.deepEqual((await store.list()).map((item) => item.key), ["k"]);
  });
}

// Resolves once the clock has moved past the millisecond it was called in.
async function nextMs(): Promise<void> {
  const now = Date.now();
  while (Date.now() <= now) await new Promise((r) => setTimeout(r, 1));
}
