// The jetstream backend's limits and invariants as users deploy it (issue 8): the 1,024-entry
// cap across handles and under cut-short calls, deletes whose markers do not pile up, scopes tied to the
// bucket instance, a deleted bucket named as such, and what list() shows of a damaged entry.

import assert from "node:assert/strict";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import {
  CapacityError,
  ConfigError,
  CorruptError,
  MAX_ENTRIES,
  NotFoundError,
  openJetStreamStore,
  openStore,
  Scope,
  serializeEntry,
  StaleError,
  type Store,
  UnavailableError,
} from "../../mod.ts";
import { MARKERS } from "../../backends/jetstream/scan.ts";
import { BUCKET, jetstreamTest, natsFixture } from "../_lib/jetstream_fixture.ts";
import { startNatsServer } from "../_lib/nats_server.ts";

const STREAM = `KV_${BUCKET}`;
const ENCODER = new TextEncoder();

const test = jetstreamTest;

// Plants `n` entries under `prefix` with raw puts, as other writers would have.
async function plant(
  kv: { put(k: string, v: Uint8Array): Promise<number> },
  prefix: string,
  n: number,
) {
  const bytes = ENCODER.encode(serializeEntry("planted", "x"));
  for (let i = 0; i < n; i += 64) {
    await Promise.all(
      Array.from({ length: Math.min(64, n - i) }, (_, j) => kv.put(`${prefix}.p${i + j}`, bytes)),
    );
  }
}

// Creates `key` and says whether it was refused as full; other failures are returned.
async function tryCreate(store: Store, key: string, signal?: AbortSignal): Promise<unknown> {
  return await store.create(key, "d", "c", signal ? { signal } : undefined).then(
    () => "created",
    (e) => e,
  );
}

// How many subjects (live keys and markers) the stream holds under `prefix`.
async function subjects(nc: Parameters<typeof jetstreamManager>[0], prefix: string) {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(STREAM, { subjects_filter: `$KV.${BUCKET}.${prefix}.>` });
  return Object.keys(info.state.subjects ?? {}).length;
}

// Runs `fn` with delete markers purgeable as soon as a listing meets them (30 minutes by default).
async function withMarkersPurgeable<T>(fn: () => Promise<T>): Promise<T> {
  const before = MARKERS.purgeAfterMs;
  // Negative: a marker stored in the same millisecond as the listing started counts as old too.
  MARKERS.purgeAfterMs = -60_000;
  try {
    return await fn();
  } finally {
    MARKERS.purgeAfterMs = before;
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

// ---------------------------------------------------------------------------------------------
// Capacity

test("capacity: one handle alone, then two handles creating strictly in turn, never pass the limit", async () => {
  await using f = await natsFixture();
  const [a, b] = [await f.open(), await f.open()];
  let created = 0;
  let refusals = 0;
  for (let i = 0; i < MAX_ENTRIES + 16; i++) {
    // The first 500 through one handle (its bound stands in for a count), then in turn.
    const outcome = await tryCreate(i < 500 || i % 2 === 0 ? a : b, `k${i}`);
    if (outcome === "created") created++;
    else if (outcome instanceof CapacityError) refusals++;
    else throw outcome;
  }
  assert.equal(created, MAX_ENTRIES);
  assert.equal(refusals, 16);
  assert.equal((await a.list()).length, MAX_ENTRIES);
});

test("capacity: a handle whose prefix another writer fills in between never passes the limit", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  const bytes = ENCODER.encode(serializeEntry("foreign", "x"));
  let total = 0;
  for (let i = 0;; i++) {
    // A writer that bypasses the library adds a key (never the last free one), then the store
    // creates one: the two never overlap.
    if (total < MAX_ENTRIES - 1) {
      await f.kv.put(`run.foreign${i}`, bytes);
      total++;
    }
    const outcome = await tryCreate(store, `k${i}`);
    if (outcome instanceof CapacityError) break;
    if (outcome !== "created") throw outcome;
    total++;
  }
  assert.equal(total, MAX_ENTRIES);
  assert.equal((await store.list()).length, MAX_ENTRIES);
});

test("capacity: a bound from before the bucket was created again proves nothing after", async () => {
  await using f = await natsFixture();
  const [a, b] = [await f.open(), await f.open()];
  for (let i = 0; i < 40; i++) await (i % 2 ? a : b).create(`k${i}`, "d", "c");
  // The bucket goes and comes back full, with fewer messages than the old stream had.
  await f.kv.destroy();
  const kv = await new Kvm(f.nc).create(BUCKET, { history: 1 });
  await plant(kv, "run", MAX_ENTRIES);
  for (const store of [a, b]) {
    assert.ok((await tryCreate(store, "one-more")) instanceof CapacityError);
  }
  assert.equal((await a.list()).length, MAX_ENTRIES);
});

test("capacity: a count cut short by a 15 ms timeout is never trusted", async () => {
  await using f = await natsFixture();
  await plant(f.kv, "run", MAX_ENTRIES);
  const hasty = await f.open({ timeout: 15 });
  for (let i = 0; i < 60; i++) {
    const outcome = await tryCreate(hasty, `hasty${i}`);
    assert.ok(
      outcome instanceof CapacityError || outcome instanceof UnavailableError,
      `create ${i} on a full store: ${outcome}`,
    );
  }
  assert.equal(await subjects(f.nc, "run"), MAX_ENTRIES);
});

test("capacity: creates aborted a few ms in never leave a partial count behind", async () => {
  await using f = await natsFixture();
  await plant(f.kv, "run", MAX_ENTRIES);
  const store = await f.open();
  for (let i = 0; i < 60; i++) {
    const outcome = await tryCreate(store, `aborted${i}`, AbortSignal.timeout(1 + (i % 8)));
    assert.ok(
      outcome instanceof CapacityError || outcome instanceof UnavailableError,
      `create ${i} on a full store: ${outcome}`,
    );
    // The same handle, not aborted, still sees a full store.
    assert.ok(await tryCreate(store, `plain${i}`) instanceof CapacityError);
  }
  assert.equal(await subjects(f.nc, "run"), MAX_ENTRIES);
});

// ---------------------------------------------------------------------------------------------
// Deleted keys

test("delete: 3,000 create+delete cycles leave markers until they are old, then list as fast as a prefix without deletes", async () => {
  // History off, in a bucket that keeps one message per key (with history: bench/micro.ts, "history
  // deleted").
  await using f = await natsFixture({}, { history: false });
  const churned = await f.open({ prefix: "churned" });
  const clean = await f.open({ prefix: "clean" });
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
    const [a, b] = [await f.open(), await f.open()];
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
  const [mine, theirs] = [await f.open(), await f.open()];
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

test("openJetStreamStore() refuses an onWarning that is not a function, through openStore() too", async () => {
  await using f = await natsFixture();
  const nc = await f.connect();
  for (
    const open of [
      () => openJetStreamStore({ bucket: BUCKET, prefix: "p" }, { nc, onWarning: 5 as never }),
      () =>
        openStore({ backend: "jetstream", options: { bucket: BUCKET, prefix: "p" } }, {
          nc,
          onWarning: "loud",
        }),
    ]
  ) {
    await assert.rejects(
      open(),
      (e: unknown) => e instanceof ConfigError && /onWarning/.test(e.message),
    );
  }
});

// ---------------------------------------------------------------------------------------------
// Scope identity, a deleted bucket, damaged entries, server versions

test("scope: a snapshot from before the bucket was deleted and recreated authorizes nothing in the new one", async () => {
  await using f = await natsFixture({}, { history: false });
  const before = await f.open();
  const scope = new Scope();
  await before.create("k", "mine", "c", { scope });
  await before.read("k", { scope });
  const snapshot = JSON.stringify(scope.snapshot());
  const revision = (await f.kv.get("run.k"))?.revision as number;

  // The bucket is destroyed and created again; "k" ends up at the same revision.
  await f.kv.destroy();
  const kv = await new Kvm(f.nc).create(BUCKET, { history: 1 });
  for (let i = 1; i < revision; i++) await kv.put(`run.filler${i}`, serializeEntry("f", "x"));
  assert.equal(await kv.put("run.k", serializeEntry("theirs", "c")), revision);

  const after = await f.open();
  const restored = Scope.restore(JSON.parse(snapshot));
  await assert.rejects(
    after.update("k", "mine", "overwritten", { scope: restored }),
    StaleError,
  );
  assert.equal((await after.read("k")).description, "theirs");
});

test("a write to a bucket deleted after opening names the bucket", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  const scope = new Scope();
  await store.create("k", "d", "c", { scope });
  await store.read("k", { scope });
  await f.kv.destroy();
  const calls: Array<[string, () => Promise<unknown>]> = [
    ["read", () => store.read("k")],
    ["create", () => store.create("n", "d", "c")],
    ["update", () => store.update("k", "d", "c2", { scope })],
    ["delete", () => store.delete("k")],
  ];
  for (const [name, call] of calls) {
    const e = await call().then(() => assert.fail(`${name} succeeded`), (e) => e);
    assert.ok(e instanceof UnavailableError, `${name}: ${e}`);
    assert.match(e.message, /memory bucket "memory" no longer exists/, `${name}: ${e.message}`);
    assert.doesNotMatch(e.message, /no JetStream server answered/);
  }
});

test("list() shows an entry whose header parses but whose body does not; read() of it is CorruptError", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  const header = ENCODER.encode(serializeEntry("damaged body", ""));
  const badUtf8 = new Uint8Array([...header, 0x66, 0xff, 0xfe, 0x0a]);
  const tooLong = new Uint8Array([...header, ...ENCODER.encode("y".repeat(70_000))]);
  await f.kv.put("run.utf8", badUtf8);
  await f.kv.put("run.long", tooLong);
  await f.kv.put("run.noheader", ENCODER.encode("no header here"));
  assert.deepEqual(await store.list(), [
    { key: "long", description: "damaged body" },
    { key: "utf8", description: "damaged body" },
  ]);
  await assert.rejects(store.read("utf8"), CorruptError);
  await assert.rejects(store.read("long"), CorruptError);
  await assert.rejects(store.read("noheader"), CorruptError);
});
