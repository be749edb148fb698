// The jetstream backend's deletes, whose markers do not pile up: a delete keeps its marker, and
// markers older than 30 minutes are purged by the listing that meets them. These tests make every
// marker old at once, through the stores' clock (`JetStreamDeps.now`).

import assert from "node:assert/strict";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { NotFoundError, openJetStreamStore, Scope, type Store } from "../../mod.ts";
import { BUCKET, jetstreamTest, natsFixture, subjects } from "../_lib/jetstream_fixture.ts";
import { startNatsServer } from "../_lib/nats_server.ts";

const STREAM = `KV_${BUCKET}`;

const test = jetstreamTest;

// The clock the stores of these tests age delete markers by: the machine's, or 31 minutes ahead.
let ahead = 0;
const now = () => Date.now() + ahead;

// Runs `fn` with delete markers purgeable as soon as a listing meets them (30 minutes by default).
async function withMarkersPurgeable<T>(fn: () => Promise<T>): Promise<T> {
  // A minute more: a marker stored in the same millisecond as the listing started counts as old too.
  ahead = 31 * 60_000;
  try {
    return await fn();
  } finally {
    ahead = 0;
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

test("delete: 3,000 create+delete cycles leave markers until they are old, then list as fast as a prefix without deletes", async () => {
  // History off, in a bucket that keeps one message per key (with history: bench/micro.ts, "history
  // deleted").
  await using f = await natsFixture({}, { history: false });
  const churned = await f.open({ prefix: "churned" }, { now });
  const clean = await f.open({ prefix: "clean" }, { now });
  for (const store of [churned, clean]) {
    for (let i = 0; i < 20; i++) await store.create(`live${i}`, "kept", "x");
  }
  const CYCLES = 3_000;
  const LANES = 8;
  await Promise.all(Array.from({ length: LANES }, async (_, lane) => {
    for (let i = lane; i < CYCLES; i += LANES) {
      await churned.create(`gone${i}`, "brief", "x");
      assert.equal(await churned.delete(`gone${i}`), true);
    }
  }));
  // Each delete keeps its marker (a purge right after it would not survive a server crash).
  assert.equal(await subjects(f.nc, "churned"), 20 + CYCLES);
  assert.equal((await f.kv.get("churned.gone0"))?.operation, "DEL");
  // Young markers are kept by a listing; old ones go, a bounded number per call.
  assert.equal((await churned.list()).length, 20);
  assert.equal(await subjects(f.nc, "churned"), 20 + CYCLES);
  await withMarkersPurgeable(async () => {
    for (let i = 0; i < 30 && (await subjects(f.nc, "churned")) > 20; i++) await churned.list();
  });
  // Nothing of the deleted keys is left in the stream.
  assert.equal(await subjects(f.nc, "churned"), 20);

  // Side by side, interleaved: the churned prefix lists within 2x of the clean one.
  const times = { churned: [] as number[], clean: [] as number[] };
  for (let round = 0; round < 9; round++) {
    for (const [name, store] of [["churned", churned], ["clean", clean]] as const) {
      const started = performance.now();
      assert.equal((await store.list()).length, 20);
      times[name].push(performance.now() - started);
    }
  }
  const ratio = median(times.churned) / median(times.clean);
  console.log(
    `tombstones: after ${CYCLES} create+delete cycles, list() of 20 entries took ${
      median(times.churned).toFixed(2)
    } ms against ${median(times.clean).toFixed(2)} ms for a prefix without deletes (${
      ratio.toFixed(2)
    }x)`,
  );
  assert.ok(ratio < 2, `the churned prefix lists ${ratio.toFixed(2)}x slower`);
  // Still fully usable.
  await churned.create("after", "d", "c");
  assert.equal((await churned.list()).length, 21);
});

test("delete: a re-create racing a delete is never purged", async () => {
  // With history (the delete moves the key's versions out and empties its subject) and without.
  for (const history of [true, false]) {
    await using f = await natsFixture({}, { history });
    const [a, b] = [await f.open({}, { now }), await f.open({}, { now })];
    await withMarkersPurgeable(() => recreateRace(a, b));
  }
});

async function recreateRace(a: Store, b: Store): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const key = `k${i}`;
    await a.create(key, "first", "x");
    const [deleted, recreated] = await Promise.all([
      a.delete(key),
      b.create(key, "second", "y").then(() => true, () => false),
    ]);
    assert.equal(deleted, true);
    // The key held a memory, so a create can only have landed after the delete's marker; the
    // purge of that marker (by a listing, racing the create too) must leave it.
    const [, read] = await Promise.all([
      a.list(),
      a.read(key).then((e) => e.description, (e) => e),
    ]);
    const after = await a.read(key).then((e) => e.description, (e) => e);
    if (recreated) assert.equal(after, "second");
    else assert.ok(after instanceof NotFoundError);
    if (recreated && read instanceof NotFoundError) assert.fail("a listing lost a re-create");
  }
}

test("delete: a stale revision in the run's scope still deletes what is there, and a gone key is false", async () => {
  await using f = await natsFixture({}, { history: false });
  const [mine, theirs] = [await f.open({}, { now }), await f.open({}, { now })];
  const scope = new Scope();
  await mine.create("k", "d", "c", { scope });
  await theirs.read("k", { scope: new Scope() });
  const other = new Scope();
  await theirs.read("k", { scope: other });
  await theirs.update("k", "d", "changed", { scope: other });
  assert.equal(await mine.delete("k", { scope }), true);
  await assert.rejects(theirs.read("k"), NotFoundError);
  await mine.create("j", "d", "c", { scope });
  await theirs.delete("j");
  assert.equal(await mine.delete("j", { scope }), false);
  assert.equal(await subjects(f.nc, "run"), 2, "two markers");
  await withMarkersPurgeable(() => mine.list());
  assert.equal(await subjects(f.nc, "run"), 0);
});

test("delete: without the purge permission, deletes fall back to markers and the store says so at open", async () => {
  const config = `
accounts {
  A: {
    jetstream: enabled
    users: [
      { user: admin, password: admin }
      { user: nopurge, password: nopurge, permissions: { publish: { deny: ["$JS.API.STREAM.PURGE.>"] } } }
    ]
  }
}`;
  await using server = await startNatsServer({ config });
  const { connect } = await import("@nats-io/transport-node");
  const url = server.url;
  const admin = await connect({ servers: url, user: "admin", pass: "admin" });
  const limited = await connect({ servers: url, user: "nopurge", pass: "nopurge" });
  try {
    const kv = await new Kvm(admin).create(BUCKET, { history: 1 });
    const warnings: string[] = [];
    const store = await openJetStreamStore({ bucket: BUCKET, prefix: "run", history: false }, {
      nc: limited,
      onWarning: (m) => warnings.push(m),
    });
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] as string, /may not purge.*delete markers.*\$JS\.API\.STREAM\.PURGE/);
    await store.create("k", "d", "c");
    assert.equal(await store.delete("k"), true);
    assert.equal((await kv.get("run.k"))?.operation, "DEL", "a marker stays");
    await assert.rejects(store.read("k"), NotFoundError);
    assert.deepEqual(await store.list(), []);
    await store.create("k", "again", "c");
    assert.equal((await store.read("k")).description, "again");

    // With the permission: no warning, and nothing is left of a deleted key.
    const full = await openJetStreamStore({ bucket: BUCKET, prefix: "run", history: false }, {
      nc: admin,
      onWarning: (m) => warnings.push(m),
      now,
    });
    assert.equal(warnings.length, 1);
    assert.equal(await full.delete("k"), true);
    await withMarkersPurgeable(() => full.list());
    assert.equal(await kv.get("run.k"), null);
  } finally {
    await admin.close();
    await limited.close();
  }
});

test("delete: a bucket whose stream denies purges falls back to markers and says so at open", async () => {
  await using f = await natsFixture({}, { history: false });
  const jsm = await jetstreamManager(f.nc);
  const info = await jsm.streams.info(STREAM);
  await jsm.streams.update(STREAM, { ...info.config, deny_purge: true, allow_rollup_hdrs: false });
  const warnings: string[] = [];
  const store = await openJetStreamStore({ bucket: BUCKET, prefix: "run", history: false }, {
    nc: await f.connect(),
    onWarning: (m) => warnings.push(m),
  });
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] as string, /denies purges.*delete markers/);
  await store.create("k", "d", "c");
  assert.equal(await store.delete("k"), true);
  assert.equal((await f.kv.get("run.k"))?.operation, "DEL");
  await assert.rejects(store.read("k"), NotFoundError);
  assert.equal(warnings.length, 1);
});

test("delete: a purge refused after open falls back to markers and says so once", async () => {
  await using f = await natsFixture({}, { history: false });
  const warnings: string[] = [];
  const store = await openJetStreamStore({ bucket: BUCKET, prefix: "run", history: false }, {
    nc: await f.connect(),
    onWarning: (m) => warnings.push(m),
    now,
  });
  assert.equal(warnings.length, 0);
  const jsm = await jetstreamManager(f.nc);
  const info = await jsm.streams.info(STREAM);
  await jsm.streams.update(STREAM, { ...info.config, deny_purge: true, allow_rollup_hdrs: false });
  for (const key of ["a", "b"]) {
    await store.create(key, "d", "c");
    assert.equal(await store.delete(key), true);
    assert.equal((await f.kv.get(`run.${key}`))?.operation, "DEL");
  }
  assert.equal(warnings.length, 0);
  await withMarkersPurgeable(async () => {
    await store.list();
    await store.list();
  });
  for (const key of ["a", "b"]) assert.equal((await f.kv.get(`run.${key}`))?.operation, "DEL");
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] as string, /refused to purge.*delete markers/);
});
