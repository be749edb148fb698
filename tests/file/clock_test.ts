// `at` is the writer's clock on the file backend; order is the chain's. A writer an hour slow
// (another process) writes between two others: the log, history and a revert keep chain order.

import assert from "node:assert/strict";
import { auditLog, history, openFileStore, revertRun, Scope } from "../../mod.ts";
import { fileTest } from "./_fixture.ts";
import { spawnDeno } from "../_lib/spawn.ts";

const SLOW = new URL("./_slow_clock.ts", import.meta.url).pathname;
const HOUR = 60 * 60 * 1000;

fileTest(
  "a writer an hour slow: the log, history and a revert dry run keep chain order",
  async (dir) => {
    const store = await openFileStore({ dir });
    await store.create("k", "about k", "A", { scope: new Scope({ run: "run-a" }) });
    await store.create("other", "about other", "x", { scope: new Scope({ run: "run-a" }) });
    await using slow = spawnDeno(SLOW, [
      JSON.stringify({ dir, key: "k", run: "run-slow", content: "B", lagMs: HOUR }),
    ], { name: "slow writer" });
    const done = await slow.waitFor("done");
    assert.ok(Date.parse(String(done.now)) < Date.now() - HOUR / 2, "the writer's clock is slow");
    const versions = await history(store, "k");
    assert.deepEqual(versions.map((v) => [v.revision, v.run]), [["2", "run-slow"], ["1", "run-a"]]);
    // Its own clock: recorded an hour before the version it follows.
    assert.ok(Date.parse(versions[0]!.at) < Date.parse(versions[1]!.at) - HOUR / 2);
    const log = await auditLog(store, { key: "k" });
    assert.deepEqual(log.map((v) => v.revision), ["1", "2"]);
    const all = await auditLog(store);
    const ks = all.filter((v) => v.key === "k").map((v) => v.revision);
    assert.deepEqual(ks, ["1", "2"], "across keys, one key's versions stay in chain order");
    const plan = await revertRun(store, "run-slow", { dryRun: true });
    assert.deepEqual(plan.actions, [{ key: "k", action: "restored", revision: "1" }]);
    assert.deepEqual(plan.conflicts, []);
    const undone = await revertRun(store, "run-slow");
    assert.deepEqual(undone.reverted, ["k"]);
    assert.equal((await store.read("k")).content, "A");
  },
);
