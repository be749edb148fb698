// The file backend's history on disk: retention, tamper evidence, damaged records, planted
// names under .history, and writes that never leave the store's directory.

import assert from "node:assert/strict";
import {
  auditStore,
  history,
  NotFoundError,
  openFileStore,
  readVersion,
  Scope,
  UnavailableError,
} from "../../mod.ts";
import { fileTest } from "./_fixture.ts";
import { acquire, lockPath, release } from "../../backends/file/testing.ts";

const ENCODER = new TextEncoder();

async function writeVersions(dir: string, n: number, options = {}) {
  const store = await openFileStore({ dir, ...options });
  await store.create("k", "about k", "v1");
  for (let i = 2; i <= n; i++) await store.update("k", "about k", `v${i}`);
  return store;
}

fileTest(
  "history: { versions, days: 0 } keeps the newest versions and prunes the rest",
  async (dir) => {
    const store = await writeVersions(dir, 17, { history: { versions: 3, days: 0 } });
    const kept = await history(store, "k");
    // At least the newest 3; pruning runs every few writes, so a few more may still be there.
    assert.ok(kept.length >= 3 && kept.length < 3 + 8, `kept ${kept.length}`);
    assert.deepEqual(kept.slice(0, 3).map((v) => v.revision), ["17", "16", "15"]);
    assert.equal((await readVersion(store, "k", "15")).content, "v15");
    await assert.rejects(readVersion(store, "k", "1"), NotFoundError);
    // The same store with the default retention keeps everything younger than 30 days.
    const all = await writeVersions(`${dir}/all`, 17);
    assert.equal((await history(all, "k")).length, 17);
  },
);

fileTest(
  "history: a deleted key keeps its versions, and a key re-created continues them",
  async (dir) => {
    const store = await openFileStore({ dir, history: { versions: 2, days: 0 } });
    await store.create("k", "about k", "one");
    await store.delete("k");
    assert.deepEqual((await history(store, "k")).map((v) => [v.revision, v.op]), [
      ["2", "delete"],
      ["1", "create"],
    ]);
    await store.create("k", "about k", "two");
    const [again] = await history(store, "k");
    assert.deepEqual([again?.revision, again?.op], ["3", "create"]);
  },
);

fileTest(
  "check: an edited version, a missing one and a damaged record are each named by key",
  async (dir) => {
    const store = await writeVersions(dir, 4);
    await writeVersions(`${dir}/unused`, 1);
    assert.deepEqual((await auditStore(store)).history, []);
    const v2 = `${dir}/.history/k/2.md`;
    await Deno.writeTextFile(v2, (await Deno.readTextFile(v2)).replace("v2", "vX"));
    await Deno.remove(`${dir}/.history/k/3.md`);
    const problems = (await auditStore(store)).history ?? [];
    assert.deepEqual(problems.map((p) => [p.key, p.revision, p.problem]), [
      ["k", "2", "edited"],
      ["k", "3", "missing"],
    ]);
    // A record that does not parse: history() skips it and says so, check names it.
    await Deno.writeFile(v2, ENCODER.encode('agentmem-version {"seq":2,"op":"upd\n---\nx'));
    const listed = await history(store, "k");
    assert.deepEqual(listed.map((v) => v.revision), ["4", "1"]);
    assert.deepEqual(listed.problems.map((p) => [p.key, p.revision, p.problem]), [
      ["k", "2", "damaged"],
    ]);
    assert.ok(((await auditStore(store)).history ?? []).some((p) => p.problem === "damaged"));
    // The memory file itself edited by hand (its record no longer matches its bytes).
    await Deno.writeTextFile(
      `${dir}/k.md`,
      (await Deno.readTextFile(`${dir}/k.md`)).replace("v4", "v9"),
    );
    const head = ((await auditStore(store)).history ?? []).find((p) => p.revision === "4");
    assert.equal(head?.problem, "edited");
  },
);

fileTest(
  "history: a head whose link into the history a power cut lost is linked back by the next write",
  async (dir) => {
    // The head's rename survived the cut, its version's link did not (their directories are
    // flushed apart); the head is still that version, and the next writes leave no gap.
    const store = await writeVersions(dir, 2);
    await Deno.remove(`${dir}/.history/k/2.md`);
    assert.deepEqual((await history(store, "k")).map((v) => v.revision), ["2", "1"]);
    assert.deepEqual((await auditStore(store)).history, []);
    await store.update("k", "about k", "v3");
    await store.delete("k");
    assert.deepEqual((await history(store, "k")).map((v) => v.revision), ["4", "3", "2", "1"]);
    assert.equal((await readVersion(store, "k", "2")).content, "v2");
    assert.deepEqual((await auditStore(store)).history, []);
  },
);

fileTest(
  "history: a killed writer's version under the head's sequence is replaced by the head's own",
  async (dir) => {
    // The cut kept what a killed writer linked above an older head, and lost the link of the head
    // that replaced it: the head is version 2, the file under 2 is not.
    const store = await writeVersions(dir, 2);
    const v2 = `${dir}/.history/k/2.md`;
    const stale = (await Deno.readTextFile(v2)).replace("v2", "vX");
    await Deno.remove(v2);
    await Deno.writeTextFile(v2, stale);
    await store.update("k", "about k", "v3");
    assert.equal((await readVersion(store, "k", "2")).content, "v2");
    assert.deepEqual((await auditStore(store)).history, []);
  },
);

fileTest(
  "history: a head written with history off is kept as a version before it is replaced",
  async (dir) => {
    const plain = await openFileStore({ dir, history: false });
    await plain.create("k", "about k", "from before history");
    const store = await openFileStore({ dir });
    assert.deepEqual(await history(store, "k"), []);
    await store.update("k", "about k", "with history", { scope: new Scope({ run: "r" }) });
    const [now, before] = await history(store, "k");
    assert.deepEqual([now?.op, now?.run, before?.via], ["update", "r", "unrecorded"]);
    assert.equal((await readVersion(store, "k", before!.revision)).content, "from before history");
    assert.deepEqual((await auditStore(store)).history, []);
  },
);

fileTest(
  "history: a symlink or file planted as .history or a key's directory is never written through",
  async (root) => {
    const dir = `${root}/store`;
    const outside = `${root}/outside`;
    await Deno.mkdir(outside);
    const store = await openFileStore({ dir });
    await Deno.symlink(outside, `${dir}/.history`);
    await assert.rejects(store.create("k", "about k", "v"), UnavailableError);
    await Deno.remove(`${dir}/.history`);
    await store.create("ok", "about ok", "v");
    await Deno.mkdir(`${outside}/x`);
    await Deno.symlink(`${outside}/x`, `${dir}/.history/evil`);
    await assert.rejects(store.create("evil", "about evil", "v"), UnavailableError);
    await Deno.writeTextFile(`${dir}/.history/file`, "planted");
    await assert.rejects(store.create("file", "about file", "v"), UnavailableError);
    assert.deepEqual([...Deno.readDirSync(outside)].map((e) => e.name), ["x"]);
    assert.deepEqual([...Deno.readDirSync(`${outside}/x`)], []);
    // Nothing half-done: the refused keys hold nothing.
    await assert.rejects(store.read("evil"), NotFoundError);
    assert.deepEqual((await store.list()).map((i) => i.key), ["ok"]);
  },
);

fileTest(
  "history: a re-create killed after its version's link and before its head's leaves no gap",
  async (dir) => {
    const store = await openFileStore({ dir });
    await store.create("k", "about k", "v1");
    await store.delete("k");
    // What the killed create leaves: its version (3, chained to the delete), no head, and its
    // staged file (a second name of that version), whose writer cannot be judged from here.
    await store.create("k", "about k", "never acknowledged");
    await Deno.link(`${dir}/.history/k/3.md`, `${dir}/.k.1-1-0badf00d.0123456789abcdef.tmp`);
    await Deno.remove(`${dir}/k.md`);
    assert.deepEqual((await history(store, "k")).map((v) => v.revision), ["2", "1"]);
    assert.deepEqual((await auditStore(store)).history, []);
    await store.create("k", "about k", "again");
    const versions = await history(store, "k");
    assert.deepEqual(versions.map((v) => [v.revision, v.op]), [
      ["3", "create"],
      ["2", "delete"],
      ["1", "create"],
    ]);
    assert.equal((await readVersion(store, "k", "3")).content, "again");
    assert.deepEqual((await auditStore(store)).history, []);
  },
);

fileTest("history: a damaged version file never blocks the next write of its key", async (dir) => {
  const store = await openFileStore({ dir });
  await store.create("k", "about k", "v1");
  await store.delete("k");
  // The delete's version emptied (what a power cut through durable: false can leave).
  await Deno.writeFile(`${dir}/.history/k/2.md`, new Uint8Array(0));
  await store.create("k", "about k", "again");
  assert.equal((await store.read("k")).content, "again");
  const listed = await history(store, "k");
  assert.deepEqual(listed.map((v) => v.revision), ["3", "1"]);
  assert.deepEqual(listed.problems.map((p) => [p.revision, p.problem]), [["2", "damaged"]]);
  assert.ok(((await auditStore(store)).history ?? []).some((p) => p.problem === "damaged"));
});

fileTest(
  "history: a create that finds, under the key's lock, a history another writer made meanwhile goes on top of it",
  async (dir) => {
    // The key's create and delete by another writer land between this create's look (no history
    // directory) and its lock: the create must look again, not take version 1's place.
    const store = await openFileStore({ dir });
    await store.create("other", "about other", "o1");
    const elsewhere = `${dir}/.elsewhere`;
    const other = await openFileStore({ dir: elsewhere });
    await other.create("k", "about k", "theirs");
    await other.delete("k");
    const held = await acquire(lockPath(dir, "k"), { key: "k" });
    const create = store.create("k", "about k", "mine");
    await new Promise((r) => setTimeout(r, 50)); // staged, and waiting for the lock
    await Deno.mkdir(`${dir}/.history/k`);
    for (const name of ["1.md", "2.md"]) {
      await Deno.copyFile(`${elsewhere}/.history/k/${name}`, `${dir}/.history/k/${name}`);
    }
    release(held);
    await create;
    assert.deepEqual((await history(store, "k")).map((v) => [v.revision, v.op]), [
      ["3", "create"],
      ["2", "delete"],
      ["1", "create"],
    ]);
    assert.equal((await store.read("k")).content, "mine");
    assert.deepEqual((await auditStore(store)).history, []);
  },
);
