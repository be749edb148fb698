// The jetstream backend's limits and invariants as users deploy it (issue 8): the 1,024-entry
// cap across handles and under cut-short calls, scopes tied to the bucket instance, a deleted
// bucket named as such, and what list() shows of a damaged entry. Deletes whose markers do not
// pile up: tests/jetstream/markers_test.ts.

import assert from "node:assert/strict";
import { Kvm } from "@nats-io/kv";
import {
  CapacityError,
  ConfigError,
  CorruptError,
  MAX_ENTRIES,
  openJetStreamStore,
  openStore,
  Scope,
  serializeEntry,
  StaleError,
  type Store,
  UnavailableError,
} from "../../mod.ts";
import { BUCKET, jetstreamTest, natsFixture, subjects } from "../_lib/jetstream_fixture.ts";

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

test("capacity: creates in flight through one handle share their counts and send no write a bound would fail", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  await store.create("first", "d", "c"); // the handle's first count
  const sent = { counts: 0, writes: 0 };
  const sub = f.nc.subscribe(">", {
    callback: (_, m) => {
      if (m.subject === `$JS.API.STREAM.INFO.KV_${BUCKET}`) sent.counts++;
      else if (m.subject.startsWith(`$KV.${BUCKET}.run.`)) sent.writes++;
    },
  });
  await f.nc.flush();
  const keys = Array.from({ length: 64 }, (_, i) => `k${i}`);
  let next = 0;
  const lane = async () => {
    while (next < keys.length) await store.create(keys[next++]!, "d", "c");
  };
  await Promise.all(Array.from({ length: 16 }, lane));
  await f.nc.flush();
  sub.unsubscribe();
  // Each create one write: none expected a stream sequence its neighbours had moved past.
  assert.equal(sent.writes, keys.length);
  // Counts shared by the creates that asked while one ran (one each: 64).
  assert.ok(sent.counts <= keys.length / 2, `${sent.counts} counts for ${keys.length} creates`);
  assert.equal((await store.list()).length, keys.length + 1);
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
