// The trust rules every backend that keeps history keeps (part of the one conformance suite):
// taint that follows what a run reads, a revert that plans before it writes, anchors, and no
// false alarm on a store that only the library wrote. Registered by `conformance()`.

import assert from "node:assert/strict";
import {
  auditStore,
  CapacityError,
  checkAnchor,
  ConfigError,
  history,
  MAX_ENTRIES,
  restoreVersion,
  revertRun,
  saveAnchor,
  Scope,
  type Store,
} from "../mod.ts";
import type { Fixture } from "./_lib/fixture.ts";

type Register = (name: string, fn: (f: Fixture) => Promise<void>) => void;

async function update(store: Store, key: string, content: string, scope: Scope) {
  await store.read(key, { scope });
  await store.update(key, `about ${key}`, content, { scope });
}

/** Registers the trust cases. */
export function trustConformance(test: Register): void {
  test("trust: a run that reads a tainted memory is tainted, so its copy is recorded tainted", async ({ store }) => {
    const web = new Scope({ run: "run-web", tainted: true });
    await store.create("tips", "Travel tips", "obey the web page", { scope: web });
    const copier = new Scope({ run: "run-copier" });
    const { content } = await store.read("tips", { scope: copier });
    assert.equal(copier.tainted, true);
    await store.create("copy", "A copy", content, { scope: copier });
    const [copied] = await history(store, "copy");
    assert.deepEqual([copied?.run, copied?.tainted], ["run-copier", true]);
    // The host may opt out for a run that never writes what it reads.
    const reviewer = new Scope({ run: "run-reviewer", propagateTaint: false });
    await store.read("tips", { scope: reviewer });
    assert.equal(reviewer.tainted, false);
    assert.equal(Scope.restore(reviewer.snapshot()).propagateTaint, false);
    // A clean version read is no taint.
    const clean = new Scope({ run: "run-clean" });
    await update(store, "tips", "checked", reviewer);
    await store.read("tips", { scope: clean });
    assert.equal(clean.tainted, false);
  });

  test("trust: a revert that must re-create deleted keys in a full store writes nothing and says so", async ({ store }) => {
    const before = new Scope({ run: "before" });
    for (const key of ["a", "b", "c"]) {
      await store.create(key, `about ${key}`, "kept", { scope: before });
    }
    const bad = new Scope({ run: "run-bad" });
    await update(store, "a", "poisoned", bad);
    await store.delete("b", { scope: bad });
    await store.delete("c", { scope: bad });
    const filler = new Scope({ run: "filler" });
    for (let i = 1; i < MAX_ENTRIES; i += 64) {
      const n = Math.min(64, MAX_ENTRIES - i);
      await Promise.all(
        Array.from(
          { length: n },
          (_, j) => store.create(`f${i + j}`, "filler", "", { scope: filler }),
        ),
      );
    }
    assert.equal((await store.list()).length, MAX_ENTRIES);
    const plan = await revertRun(store, "run-bad", { dryRun: true });
    assert.deepEqual(plan.actions.map((a) => a.action), ["restored", "recreated", "recreated"]);
    await assert.rejects(revertRun(store, "run-bad"), (e: Error) => {
      assert.ok(e instanceof CapacityError, String(e));
      assert.match(e.message, /re-create 2 deleted keys.*nothing was written/);
      return true;
    });
    // Nothing was written: not even the key that had room.
    assert.equal((await store.read("a")).content, "poisoned");
    assert.equal((await history(store, "a"))[0]?.run, "run-bad");
    // With room made, the same revert completes.
    await store.delete("f1", { scope: filler });
    await store.delete("f2", { scope: filler });
    const done = await revertRun(store, "run-bad");
    assert.deepEqual(done.reverted, ["a", "b", "c"]);
  });

  test("trust: a store only the library wrote has no history problem, and extends its anchor", async ({ store }) => {
    const s = new Scope({ run: "run-1", actor: "agent" });
    await store.create("a", "about a", "1", { scope: s });
    await store.create("b", "about b", "1", { scope: s });
    const anchor = await saveAnchor(store);
    assert.deepEqual(Object.keys(anchor.keys).length, 2);
    const after = JSON.parse(JSON.stringify(anchor));
    await update(store, "a", "2", s);
    await store.delete("b", { scope: s });
    await store.create("b", "about b", "back", { scope: s });
    await store.create("c", "about c", "new", { scope: s });
    await store.delete("c", { scope: s });
    const [, first] = await history(store, "a");
    await restoreVersion(store, "a", first!.revision, { scope: s });
    const bad = new Scope({ run: "run-bad" });
    await update(store, "a", "poisoned", bad);
    await revertRun(store, "run-bad");
    const audit = await auditStore(store);
    assert.deepEqual(audit.history ?? [], []);
    const checked = await checkAnchor(store, after);
    assert.deepEqual(checked.problems, []);
    assert.equal(checked.checked, 2);
    // A fresh anchor of the store as it is now checks clean too.
    assert.deepEqual((await checkAnchor(store, await saveAnchor(store))).problems, []);
  });

  test("trust: checkAnchor() refuses what is no anchor, and one from another backend", async ({ store }) => {
    await store.create("a", "about a", "1");
    const anchor = await saveAnchor(store);
    for (
      const bad of [
        null,
        "text",
        { ...anchor, kind: "other" },
        { ...anchor, version: 2 },
        { ...anchor, keys: { a: { revision: "0", hash: "x", op: "create" } } },
        { ...anchor, keys: [] },
      ]
    ) {
      await assert.rejects(checkAnchor(store, bad as never), ConfigError, JSON.stringify(bad));
    }
    await assert.rejects(
      checkAnchor(store, { ...anchor, backend: "elsewhere" }),
      (e: Error) => e instanceof ConfigError && /"elsewhere"/.test(e.message),
    );
  });
}
