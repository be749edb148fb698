// The file backend's opt-in read-before-update: revision checks across handles and processes,
// the per-key lock (never left behind by a killed process), and revisions bound to one directory.

import assert from "node:assert/strict";
import {
  auditStore,
  history,
  openFileStore,
  readVersion,
  Scope,
  StaleError,
  UnavailableError,
} from "../../mod.ts";
import { acquire, lockPath, release } from "../../backends/file/testing.ts";
import { lockHolder, rbuWorker } from "./_rbu_spawn.ts";
import { fileTest, leftIn } from "./_fixture.ts";

fileTest(
  "readBeforeUpdate: 4 processes x 100 read-modify-write increments lose nothing, even with a lock holder SIGKILLed",
  async (dir) => {
    const store = await openFileStore({ dir, readBeforeUpdate: true });
    await store.create("counter", "counter", "0");
    // A process takes the key's lock and is killed while holding it: the others must go on.
    {
      await using holder = lockHolder(dir, "counter");
      await holder.waitFor("locked");
      holder.kill("SIGKILL");
    }
    assert.ok(
      (await Deno.lstat(lockPath(dir, "counter"))).isFile,
      "the dead holder's lock stays",
    );
    const workers = Array.from(
      { length: 4 },
      () => rbuWorker({ job: "counter", dir, key: "counter", n: 100 }),
    );
    try {
      await Promise.all(workers.map((w) => w.succeeded()));
    } finally {
      for (const w of workers) await w[Symbol.asyncDispose]();
    }
    const retries = workers.map((w) => Number(w.records.find((r) => r.t === "done")?.retries));
    assert.equal((await store.read("counter")).content, "400");
    // Exactly one version per acknowledged write: the create, then 1 to 400 each once, in order.
    const versions = (await history(store, "counter")).reverse();
    const contents = await Promise.all(
      versions.map(async (v) => (await readVersion(store, "counter", v.revision)).content),
    );
    assert.deepEqual(contents, Array.from({ length: 401 }, (_, i) => String(i)));
    assert.ok(retries.reduce((a, b) => a + b, 0) > 0, `stale retries seen: ${retries}`);
    // The dead holder's lock was broken and every lock taken since was released; what the dead
    // holder left (its shared lock file) goes at the next open's sweep.
    await openFileStore({ dir });
    assert.deepEqual(leftIn(dir, ["counter.md"]), []);
  },
);

// A store opened with `options` holding key "k" (content "v1"), and the key's lock held by this
// process.
async function lockedKey(dir: string, options: { history?: boolean; readBeforeUpdate?: boolean }) {
  const store = await openFileStore({ dir, ...options });
  await store.create("k", "d", "v1");
  return { store, lock: await acquire(lockPath(dir, "k"), { key: "k" }) };
}

// The same with readBeforeUpdate, and "k" read into a scope (a read takes no lock).
async function heldKey(dir: string) {
  const { store, lock } = await lockedKey(dir, { readBeforeUpdate: true });
  const scope = new Scope();
  await store.read("k", { scope });
  return { store, scope, lock };
}

fileTest(
  "readBeforeUpdate: a writer waits for a lock held by a live process, then checks",
  async (dir) => {
    const { store, scope, lock } = await heldKey(dir);
    let settled = false;
    const update = store.update("k", "d", "v2", { scope }).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(settled, false, "the update waits while the lock is held");
    assert.equal((await store.read("k")).content, "v1");
    release(lock);
    await update;
    assert.equal((await store.read("k")).content, "v2");
  },
);

fileTest(
  "readBeforeUpdate: an aborted wait for the lock fails with UnavailableError and writes nothing",
  async (dir) => {
    const { store, scope, lock } = await heldKey(dir);
    try {
      const ac = new AbortController();
      const update = store.update("k", "d", "v2", { scope, signal: ac.signal });
      setTimeout(() => ac.abort(), 30);
      await assert.rejects(update, UnavailableError);
    } finally {
      release(lock);
    }
    assert.equal((await store.read("k")).content, "v1");
    assert.deepEqual(leftIn(dir), ["k.md"]);
  },
);

fileTest(
  "readBeforeUpdate: a revision read in one directory never authorizes a write in another",
  async (root) => {
    const a = await openFileStore({ dir: `${root}/a`, readBeforeUpdate: true });
    const b = await openFileStore({ dir: `${root}/b`, readBeforeUpdate: true });
    // The same bytes in both: only the directory tells the revisions apart.
    await a.create("k", "same", "same");
    await b.create("k", "same", "same");
    const scope = new Scope();
    await a.read("k", { scope });
    await assert.rejects(b.update("k", "x", "x", { scope }), StaleError);
    // The snapshot through JSON, after the directory is removed and made again at its path.
    const snapshot = JSON.stringify(scope.snapshot());
    await Deno.remove(`${root}/a`, { recursive: true });
    const again = await openFileStore({ dir: `${root}/a`, readBeforeUpdate: true });
    await again.create("k", "same", "same");
    const restored = Scope.restore(JSON.parse(snapshot));
    await assert.rejects(again.update("k", "x", "x", { scope: restored }), StaleError);
    assert.equal((await again.read("k")).content, "same");
  },
);

fileTest(
  "readBeforeUpdate: the revision is the stored bytes, so rewriting identical bytes keeps a reader's revision valid",
  async (dir) => {
    const store = await openFileStore({ dir, readBeforeUpdate: true });
    const peer = await openFileStore({ dir, readBeforeUpdate: true });
    await store.create("k", "d", "body");
    const mine = new Scope();
    await store.read("k", { scope: mine });
    const theirs = new Scope();
    await peer.read("k", { scope: theirs });
    await peer.update("k", "d", "changed", { scope: theirs });
    await peer.update("k", "d", "body", { scope: theirs });
    // What this run read is exactly what is stored again: nothing it did not see is lost.
    await store.update("k", "d", "mine", { scope: mine });
    assert.equal((await store.read("k")).content, "mine");
    // Any other bytes: stale.
    await assert.rejects(peer.update("k", "d", "theirs", { scope: theirs }), StaleError);
  },
);

fileTest(
  "readBeforeUpdate off: update replaces without a scope, as the seed says, and takes no lock",
  async (dir) => {
    // With history off: with it on, every write takes the key's lock to append its version.
    const { store, lock } = await lockedKey(dir, { history: false });
    try {
      await store.update("k", "d", "v2");
      assert.equal(await store.delete("k"), true);
    } finally {
      release(lock);
    }
  },
);

fileTest(
  "readBeforeUpdate: a delete takes the lock, so it never falls between an update's check and its rename",
  async (dir) => {
    const { store, lock } = await lockedKey(dir, { readBeforeUpdate: true });
    let deleted = false;
    const del = store.delete("k").then((r) => (deleted = r));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(deleted, false);
    assert.ok((await Deno.lstat(`${dir}/k.md`)).isFile);
    release(lock);
    assert.equal(await del, true);
  },
);

fileTest(
  "readBeforeUpdate: a 200-character key is written, checked, locked and broken like any other",
  async (dir) => {
    const key = `k${"x".repeat(198)}z`;
    const store = await openFileStore({ dir, readBeforeUpdate: true });
    await store.create(key, "long", "v1");
    {
      await using holder = lockHolder(dir, key);
      await holder.waitFor("locked");
      holder.kill("SIGKILL");
    }
    const scope = new Scope();
    await store.read(key, { scope });
    await store.update(key, "long", "v2", { scope });
    assert.equal((await store.read(key)).content, "v2");
    assert.equal(await store.delete(key), true);
    // The killed holder's shared lock file goes at the next open's sweep.
    await openFileStore({ dir });
    assert.deepEqual(leftIn(dir), []);
  },
);

fileTest(
  "history: 4 processes x 50 plain updates of one key leave exactly one version per update",
  async (dir) => {
    const store = await openFileStore({ dir });
    await store.create("shared", "shared", "start");
    const workers = ["a", "b", "c", "d"].map((id) =>
      rbuWorker({ job: "replace", dir, key: "shared", n: 50, id })
    );
    try {
      await Promise.all(workers.map((w) => w.succeeded()));
    } finally {
      for (const w of workers) await w[Symbol.asyncDispose]();
    }
    const versions = await history(store, "shared");
    const contents = await Promise.all(
      versions.map(async (v) => (await readVersion(store, "shared", v.revision)).content),
    );
    // Every acknowledged update has its version, none twice, and the head is the newest.
    const expected = [
      "start",
      ..."abcd".split("").flatMap((id) => Array.from({ length: 50 }, (_, i) => `${id}:${i}`)),
    ];
    assert.deepEqual([...contents].sort(), expected.sort());
    assert.equal(contents[0], (await store.read("shared")).content);
    assert.deepEqual((await auditStore(store)).history, []);
  },
);
