// Retention on jetstream keeps what the setting says (issue 27): versions move out of the listed
// subjects by their place in the chain, whatever handle writes them; every cut leaves a record
// that check and anchors accept; a key deleted more than `days` ago keeps only that record.

import assert from "node:assert/strict";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import {
  auditStore,
  checkAnchor,
  history,
  type HistorySetting,
  openJetStreamStore,
  saveAnchor,
  Scope,
  type Store,
} from "../../mod.ts";
import { BUCKET, jetstreamTest as test, natsFixture } from "../_lib/jetstream_fixture.ts";

const STREAM = `KV_${BUCKET}`;
const HISTORY = `KVH_${BUCKET}`;
// A key's subject holds at most this many messages between moves (keeper.ts's MOVE_EVERY).
const MOVE_EVERY = 16;

function open(nc: NatsConnection, history: HistorySetting = true): Promise<Store> {
  return openJetStreamStore({ bucket: BUCKET, prefix: "run", history }, { nc });
}

async function perSubject(nc: NatsConnection, stream: string, filter: string) {
  const info = await (await jetstreamManager(nc)).streams.info(stream, { subjects_filter: filter });
  return info.state.subjects ?? {};
}

async function eventually(what: string, check: () => Promise<boolean>, ms = 10_000) {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`never: ${what}`);
}

test("retention: versions move out by their place in the chain, through a fresh handle per update; { versions: 3, days: 0 } keeps 3 and leaves a record of each cut that check and an earlier anchor accept", async () => {
  await using f = await natsFixture();
  const nc = await f.connect();
  const keys = Array.from({ length: 16 }, (_, i) => `k${i}`);
  const setup = await open(nc, { versions: 3, days: 0 });
  for (const key of keys) await setup.create(key, `about ${key}`, "v0", { scope: new Scope() });
  const anchor = await saveAnchor(setup);
  const updates = 50;
  for (let v = 1; v <= updates; v++) {
    await Promise.all(keys.map(async (key) => {
      // One handle per run, as hosts open them.
      const store = await open(nc, { versions: 3, days: 0 });
      const scope = new Scope({ run: `run-${v}` });
      await store.read(key, { scope });
      await store.update(key, `about ${key}`, `v${v}`, { scope });
    }));
  }
  await eventually("every key's versions moved and cut", async () => {
    const subjects = await perSubject(nc, STREAM, `$KV.${BUCKET}.run.>`);
    const packs = await perSubject(nc, HISTORY, `$KVH.${BUCKET}.run.>`);
    return keys.every((k) =>
      (subjects[`$KV.${BUCKET}.run.${k}`] ?? 0) <= MOVE_EVERY &&
      (packs[`$KVH.${BUCKET}.run.${k}`] ?? 0) <= 2
    );
  });
  const subjects = await perSubject(nc, STREAM, `$KV.${BUCKET}.run.>`);
  assert.ok(Object.values(subjects).every((n) => n <= MOVE_EVERY), JSON.stringify(subjects));
  const store = await open(nc, { versions: 3, days: 0 });
  for (const key of keys) {
    const versions = await history(store, key);
    assert.deepEqual(versions.map((v) => v.run), ["run-50", "run-49", "run-48"], key);
  }
  // A handle that keeps more still sees what the cuts left: more than 3, fewer than all.
  const all = await history(await open(nc), "k0");
  assert.ok(all.length >= 3 && all.length < updates + 1, `${all.length} versions kept`);
  const audit = await auditStore(store);
  assert.deepEqual(audit.history, []);
  const checked = await checkAnchor(store, anchor);
  assert.deepEqual([checked.problems, checked.checked], [[], 16]);
});

test("retention: a key deleted more than `days` ago keeps only a record of a few bytes, which check, an anchor and a later create chain to", async () => {
  await using f = await natsFixture();
  const nc = await f.connect();
  const days = 2 / 86_400; // two seconds
  const writer = await open(nc, { versions: 64, days });
  const keys = Array.from({ length: 200 }, (_, i) => `gone${i}`);
  for (let i = 0; i < keys.length; i += 20) {
    await Promise.all(
      keys.slice(i, i + 20).map(async (key) => {
        const scope = new Scope({ run: "run-old" });
        await writer.create(key, `about ${key}`, "x".repeat(500), { scope });
        await writer.read(key, { scope });
        await writer.update(key, `about ${key}`, "y".repeat(500), { scope });
        await writer.delete(key, { scope });
      }),
    );
  }
  const jsm = await jetstreamManager(nc);
  await eventually("every deleted key moved", async () => {
    const packs = await perSubject(nc, HISTORY, `$KVH.${BUCKET}.run.>`);
    return Object.keys(packs).length === keys.length;
  });
  const before = (await jsm.streams.info(HISTORY)).state.bytes;
  const anchor = await saveAnchor(writer);
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  // A delete through a fresh handle sweeps for expired keys.
  const sweeper = await open(nc, { versions: 64, days });
  await sweeper.create("trigger", "about trigger", "x", { scope: new Scope() });
  await sweeper.delete("trigger", { scope: new Scope() });
  await eventually("every deleted key expired", async () => {
    const after = (await jsm.streams.info(HISTORY)).state.bytes;
    return after / keys.length < 250;
  }, 20_000);
  const after = (await jsm.streams.info(HISTORY)).state.bytes;
  console.log(
    `history stream: ${before} bytes for ${keys.length} deleted keys, ${after} after they expired (${
      Math.round(after / keys.length)
    } per key)`,
  );
  assert.deepEqual(await history(writer, "gone0"), []);
  assert.deepEqual((await auditStore(writer)).history, []);
  assert.deepEqual((await checkAnchor(writer, anchor)).problems, []);
  const scope = new Scope({ run: "run-new" });
  await writer.create("gone0", "about gone0", "back", { scope });
  assert.deepEqual((await history(writer, "gone0")).map((v) => [v.op, v.run]), [
    ["create", "run-new"],
  ]);
  assert.deepEqual((await auditStore(writer)).history, []);
  assert.deepEqual((await checkAnchor(writer, anchor)).problems, []);
});
