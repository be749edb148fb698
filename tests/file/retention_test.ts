// Retention on the file backend: a key's oldest versions are cut in chain order whatever the
// writers' clocks say, every cut leaves a record that check and anchors accept, and a key
// deleted more than `days` ago expires whole, keeping one line.

import assert from "node:assert/strict";
import { auditStore, checkAnchor, history, openFileStore, saveAnchor } from "../../mod.ts";
import { fileTest } from "./_fixture.ts";

const DAY = 24 * 60 * 60 * 1000;

// Runs `fn` with every Date this process makes `offsetMs` away from now.
async function atClock<T>(offsetMs: number, fn: () => Promise<T>): Promise<T> {
  const Real = Date;
  class Shifted extends Real {
    constructor(...args: unknown[]) {
      super(...((args.length === 0 ? [Real.now() + offsetMs] : args) as [number]));
    }
    static override now(): number {
      return Real.now() + offsetMs;
    }
  }
  globalThis.Date = Shifted as DateConstructor;
  try {
    return await fn();
  } finally {
    globalThis.Date = Real;
  }
}

async function problems(dir: string): Promise<string[][]> {
  const store = await openFileStore({ dir, readOnly: true });
  return ((await auditStore(store)).history ?? []).map((p) => [
    p.key,
    p.revision ?? "",
    p.problem,
  ]);
}

fileTest(
  "retention cuts a key's oldest run in chain order, whatever the clocks, and leaves a record",
  async (dir) => {
    const store = await openFileStore({ dir, history: { versions: 3, days: 1 } });
    // Versions 1 to 3 and 5 written by clocks days behind, 4 and the rest by one on time.
    const clock = (seq: number) => (seq <= 3 || seq === 5 ? -3 * DAY : 0);
    await atClock(clock(1), () => store.create("k", "about k", "v1"));
    for (let seq = 2; seq <= 16; seq++) {
      await atClock(clock(seq), () => store.update("k", "about k", `v${seq}`));
    }
    const kept = (await history(store, "k")).map((v) => Number(v.revision));
    // 1 to 3 went (the oldest run old enough); 5 stays, since 4 after... before it must.
    assert.deepEqual(kept, Array.from({ length: 13 }, (_, i) => 16 - i));
    assert.deepEqual(
      [...Deno.readDirSync(`${dir}/.history/k`)].some((e) => e.name === "1.md"),
      false,
    );
    assert.match(await Deno.readTextFile(`${dir}/.history/k/cut`), /^agentmem-cut \{"seq":3,/);
    assert.deepEqual(await problems(dir), []);
    // An anchor from before the cut still checks: the record explains the versions gone.
    const anchor = await saveAnchor(store);
    assert.deepEqual((await checkAnchor(store, anchor)).problems, []);
    // Without its record, the same cut is a truncation.
    await Deno.remove(`${dir}/.history/k/cut`);
    assert.deepEqual(await problems(dir), [["k", "4", "truncated"]]);
  },
);

fileTest(
  "retention with days: 0 keeps the newest versions of a key, cut by record",
  async (dir) => {
    const store = await openFileStore({ dir, history: { versions: 3, days: 0 } });
    await store.create("k", "about k", "v1");
    const anchor = await saveAnchor(store);
    for (let seq = 2; seq <= 40; seq++) await store.update("k", "about k", `v${seq}`);
    const kept = await history(store, "k");
    assert.ok(kept.length >= 3 && kept.length < 3 + 8, `kept ${kept.length}`);
    assert.equal(kept[0]!.revision, "40");
    // What is on disk: the kept versions and at most one cut's worth more.
    const files = [...Deno.readDirSync(`${dir}/.history/k`)].filter((e) => e.name.endsWith(".md"));
    assert.ok(files.length <= 3 + 16, `${files.length} version files`);
    assert.deepEqual(await problems(dir), []);
    assert.deepEqual((await checkAnchor(store, anchor)).problems, []);
  },
);

fileTest("a key deleted more than days ago expires whole, keeping one line", async (dir) => {
  const store = await openFileStore({ dir, history: { versions: 64, days: 1 } });
  // Deleted 2 days ago (by the clock of the writer that deleted them).
  await atClock(-2 * DAY, async () => {
    for (let i = 0; i < 20; i++) {
      await store.create(`gone${i}`, "about it", "body");
      await store.delete(`gone${i}`);
    }
  });
  await store.create("kept", "about kept", "v1");
  await store.create("recent", "about recent", "v1");
  await store.delete("recent");
  const anchor = await saveAnchor(store);
  // The next handle's walk (at open and every few writes) expires them.
  const next = await openFileStore({ dir, history: { versions: 64, days: 1 } });
  for (let i = 0; i < 4; i++) await next.update("kept", "about kept", `v${i + 2}`);
  const left = [...Deno.readDirSync(`${dir}/.history`)].map((e) => e.name).sort();
  assert.deepEqual(left, [".expired", ".swept", "kept", "recent"]);
  const lines = (await Deno.readTextFile(`${dir}/.history/.expired`)).trim().split("\n");
  assert.equal(lines.length, 20);
  assert.match(lines[0]!, /^agentmem-expired \{"key":"gone\d+","seq":2,"hash":"[0-9a-f]{64}"\}$/);
  assert.deepEqual(await problems(dir), []);
  assert.deepEqual((await checkAnchor(next, anchor)).problems, []);
  assert.deepEqual(await history(next, "gone0"), []);
  // A key expired whole goes on from its record when it comes back.
  await next.create("gone0", "about it", "back");
  assert.deepEqual((await history(next, "gone0")).map((v) => [v.revision, v.op]), [[
    "3",
    "create",
  ]]);
  assert.deepEqual(await problems(dir), []);
  assert.deepEqual((await checkAnchor(next, anchor)).problems, []);
});

fileTest(
  "the history walk goes on where the last handle stopped, and writes that place every 64 names, not at every step",
  async (dir) => {
    const keys = Array.from({ length: 200 }, (_, i) => `k${String(i).padStart(3, "0")}`);
    const first = await openFileStore({ dir, history: { versions: 64, days: 1 } });
    for (const k of keys) await first.create(k, "about it", "body");
    await Deno.remove(`${dir}/.history/.swept`);
    const swept = () => Deno.readTextFile(`${dir}/.history/.swept`).then((t) => t.trim());
    // A new handle walks 64 names at open, from the start (no place written), and says where.
    const a = await openFileStore({ dir, history: { versions: 64, days: 1 } });
    assert.equal(await swept(), "k063");
    // Then 8 names every 8 writes; the place is written again once 64 more are walked.
    for (let i = 0; i < 8; i++) await a.update("k000", "about it", `v${i}`);
    assert.equal(await swept(), "k063");
    for (let i = 8; i < 64; i++) await a.update("k000", "about it", `v${i}`);
    assert.equal(await swept(), "k127");
    // The next handle goes on from there.
    await openFileStore({ dir, history: { versions: 64, days: 1 } });
    assert.equal(await swept(), "k191");
  },
);
