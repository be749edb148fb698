// A history you can trust, on jetstream (issue 27): check means the same whatever the prefix,
// versions carry the server's time, check sees what was done around the library (the history
// stream purged, a key's subject purged, raw deletes and puts, forged headers) and damage on one
// key never stops the others; a handle with history off never erases history.

import assert from "node:assert/strict";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { headers } from "@nats-io/nats-core";
import {
  auditLog,
  auditStore,
  checkAnchor,
  ConfigError,
  history,
  type HistoryProblem,
  revertRun,
  saveAnchor,
  Scope,
  serializeEntry,
  type Store,
} from "../../mod.ts";
import { chainHash } from "../../store/chain.ts";
import { BUCKET, jetstreamTest as test, natsFixture } from "../_lib/jetstream_fixture.ts";
import { spawnDeno } from "../_lib/spawn.ts";
import type { ClockJob } from "./_clock_worker.ts";

const STREAM = `KV_${BUCKET}`;
const HISTORY = `KVH_${BUCKET}`;
const DAY_MS = 86_400_000;
const CLOCK_WORKER = new URL("./_clock_worker.ts", import.meta.url).pathname;
const ENCODER = new TextEncoder();

type Fixture = Awaited<ReturnType<typeof natsFixture>>;

async function update(store: Store, key: string, content: string, scope: Scope) {
  await store.read(key, { scope });
  await store.update(key, `about ${key}`, content, { scope });
}

// What check reports, by key: the problem kinds in order.
async function problemsOf(store: Store): Promise<Record<string, string[]>> {
  const byKey: Record<string, string[]> = {};
  for (const p of (await auditStore(store)).history ?? []) (byKey[p.key] ??= []).push(p.problem);
  return byKey;
}

// Waits until `check` holds (versions move in the background), or fails after a few seconds.
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`never: ${what}`);
}

// How many messages the history stream holds for `key` (prefix "run").
async function packsOf(f: Fixture, key: string): Promise<number> {
  const jsm = await jetstreamManager(f.nc);
  const info = await jsm.streams.info(HISTORY, { subjects_filter: `$KVH.${BUCKET}.run.${key}` });
  return info.state.subjects?.[`$KVH.${BUCKET}.run.${key}`] ?? 0;
}

// How many messages the bucket's stream holds on `key`'s subject (prefix "run").
async function onSubject(f: Fixture, key: string): Promise<number> {
  const jsm = await jetstreamManager(f.nc);
  const info = await jsm.streams.info(STREAM, { subjects_filter: `$KV.${BUCKET}.run.${key}` });
  return info.state.subjects?.[`$KV.${BUCKET}.run.${key}`] ?? 0;
}

async function purge(f: Fixture, stream: string, filter?: string, below?: number) {
  const jsm = await jetstreamManager(f.nc);
  await jsm.streams.purge(
    stream,
    filter === undefined ? undefined : { filter, ...(below === undefined ? {} : { seq: below }) },
  );
}

async function runClock(f: Fixture, job: Omit<ClockJob, "servers" | "bucket">) {
  await using child = spawnDeno(CLOCK_WORKER, [
    JSON.stringify({ servers: f.server.url, bucket: BUCKET, ...job }),
  ], {
    name: `clock worker (${job.offsetMs} ms)`,
    permissions: ["--allow-net=127.0.0.1", "--allow-env", "--allow-read", "--allow-sys"],
  });
  await child.waitFor("done");
  await child.succeeded();
}

test('trust: check means the same whatever the prefix: an agent\'s keys checked with prefix "" raise no alarm, and a revert under one prefix is clean under the other', async () => {
  await using f = await natsFixture();
  const agent = await f.open({ prefix: "travel-agent" });
  const whole = await f.open({ prefix: "" });
  const s = new Scope({ run: "run-1", actor: "agent" });
  for (const key of ["user.units", "user.home", "trip.plan", "trip.budget"]) {
    await agent.create(key, `about ${key}`, "v1", { scope: s });
    await update(agent, key, "v2", s);
  }
  const bad = new Scope({ run: "run-bad", tainted: true });
  await update(agent, "trip.plan", "poisoned", bad);
  await update(agent, "user.units", "poisoned", bad);
  assert.deepEqual(await problemsOf(whole), {}, 'the agent\'s keys checked with prefix ""');
  assert.deepEqual(await problemsOf(agent), {});
  // Reverted under prefix "", checked under the agent's.
  const done = await revertRun(whole, "run-bad");
  assert.deepEqual(done.reverted, ["travel-agent.trip.plan", "travel-agent.user.units"]);
  assert.equal((await agent.read("trip.plan")).content, "v2");
  assert.deepEqual(await problemsOf(agent), {});
  assert.deepEqual(await problemsOf(whole), {});
  // And the other way round.
  const bad2 = new Scope({ run: "run-bad-2" });
  await update(whole, "travel-agent.user.home", "poisoned", bad2);
  await revertRun(agent, "run-bad-2");
  assert.equal((await whole.read("travel-agent.user.home")).content, "v2");
  assert.deepEqual(await problemsOf(whole), {});
  assert.deepEqual(await problemsOf(agent), {});
  // An anchor saved under one prefix checks under the other.
  const checked = await checkAnchor(agent, await saveAnchor(whole));
  assert.deepEqual([checked.problems, checked.checked], [[], 4]);
  assert.deepEqual((await checkAnchor(whole, await saveAnchor(agent))).problems, []);
});

test("trust: a version's time is the server's: a writer 40 days slow keeps its versions in time, order and retention, and its clock stays covered by the hash", async () => {
  await using f = await natsFixture();
  await runClock(f, { prefix: "run", offsetMs: 0, run: "run-a", key: "k", writes: 10 });
  const between = Date.now();
  await runClock(f, { prefix: "run", offsetMs: -40 * DAY_MS, run: "run-b", key: "k", writes: 5 });
  const store = await f.open({ history: { versions: 2, days: 30 } });
  const versions = await history(store, "k");
  // Every version is minutes old by the server's clock: `days: 30` keeps them all.
  assert.equal(versions.length, 15);
  assert.deepEqual(versions.slice(0, 5).map((v) => v.run), Array(5).fill("run-b"));
  for (const v of versions.slice(0, 5)) {
    assert.ok(Math.abs(Date.parse(v.at) - between) < 60_000, `run-b's version at ${v.at}`);
  }
  const ats = versions.map((v) => Date.parse(v.at));
  assert.deepEqual(ats, [...ats].sort((a, b) => b - a), "newest first, by time too");
  const log = await auditLog(store, { key: "k" });
  assert.deepEqual(log.map((v) => v.run), [...Array(10).fill("run-a"), ...Array(5).fill("run-b")]);
  assert.deepEqual(await problemsOf(store), {});
});

test("trust: check without an anchor sees the history stream purged (truncated); a deleted key removed whole is seen by the anchor", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  const s = new Scope({ run: "r" });
  for (const key of ["moved", "gone", "gone2", "fresh"]) {
    await store.create(key, `about ${key}`, "v0", { scope: s });
  }
  for (let i = 1; i <= 40; i++) await update(store, "moved", `v${i}`, s);
  await update(store, "gone", "v1", s);
  await store.delete("gone", { scope: s });
  await store.delete("gone2", { scope: s });
  await eventually(
    "versions moved, deleted keys' subjects emptied",
    async () =>
      (await packsOf(f, "moved")) > 0 && (await onSubject(f, "gone")) === 0 &&
      (await onSubject(f, "gone2")) === 0,
  );
  const anchor = await saveAnchor(store);
  assert.deepEqual(await problemsOf(store), {});
  // One deleted key's history purged: nothing is left to see without the anchor.
  await purge(f, HISTORY, `$KVH.${BUCKET}.run.gone2`);
  assert.deepEqual(await problemsOf(store), {});
  const one = await checkAnchor(store, anchor);
  assert.deepEqual(one.problems.map((p) => [p.key, p.problem]), [["gone2", "removed"]]);
  // The whole history stream purged.
  await purge(f, HISTORY);
  assert.deepEqual(await problemsOf(store), { moved: ["truncated"] });
  const all = await checkAnchor(store, anchor);
  assert.deepEqual(all.problems.map((p) => [p.key, p.problem]), [
    ["gone", "removed"],
    ["gone2", "removed"],
  ]);
});

test("trust: check without an anchor sees a key's subject purged (removed), a raw delete and a raw put (unrecorded, still after later writes)", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  const s = new Scope({ run: "r" });
  for (const key of ["purged", "rawdel", "rawput", "clean"]) {
    await store.create(key, `about ${key}`, "v0", { scope: s });
  }
  for (let i = 1; i <= 20; i++) await update(store, "purged", `v${i}`, s);
  await eventually("purged's versions moved", async () => (await packsOf(f, "purged")) > 0);
  await purge(f, STREAM, `$KV.${BUCKET}.run.purged`);
  await f.kv.delete("run.rawdel");
  await f.kv.put("run.rawput", serializeEntry("about rawput", "written around the library"));
  assert.deepEqual(await problemsOf(store), {
    purged: ["removed"],
    rawdel: ["unrecorded"],
    rawput: ["unrecorded"],
  });
  // Later writes chain past the raw ones, which stay reported (a listing moves the raw delete).
  await store.list();
  await store.create("rawdel", "about rawdel", "back", { scope: s });
  for (let i = 1; i <= 20; i++) await update(store, "rawput", `v${i}`, s);
  await eventually("rawput's versions moved", async () => (await packsOf(f, "rawput")) > 0);
  assert.deepEqual(await problemsOf(store), {
    purged: ["removed"],
    rawdel: ["unrecorded"],
    rawput: ["unrecorded"],
  });
  assert.equal((await history(store, "rawput")).length, 21);
});

test("trust: a forged message with malformed version headers is reported on its key and never stops history, auditLog, revertRun or check on the others", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  const s = new Scope({ run: "run-ok" });
  const bad = new Scope({ run: "run-bad" });
  for (const key of ["forged", "a", "b"]) {
    await store.create(key, `about ${key}`, "v0", { scope: s });
  }
  await update(store, "a", "poisoned", bad);
  const h = headers();
  h.set("Agentmem-Op", "update");
  h.set("Agentmem-At", "not a time");
  h.set("Agentmem-Via", "api");
  h.set("Agentmem-Prev", "0".repeat(64));
  h.set("Agentmem-Hash", "f".repeat(64));
  await jetstream(f.nc).publish(
    `$KV.${BUCKET}.run.forged`,
    ENCODER.encode(serializeEntry("about forged", "forged")),
    { headers: h },
  );
  const problems = (await auditStore(store)).history ?? [];
  assert.deepEqual(problems.map((p: HistoryProblem) => [p.key, p.problem]), [[
    "forged",
    "damaged",
  ]]);
  assert.equal((await history(store, "a")).length, 2);
  const forged = await history(store, "forged");
  assert.equal(forged.length, 1);
  assert.deepEqual(forged.problems.map((p) => p.problem), ["damaged"]);
  const log = await auditLog(store);
  assert.equal(log.length, 4);
  assert.deepEqual(log.problems.map((p) => [p.key, p.problem]), [["forged", "damaged"]]);
  const reverted = await revertRun(store, "run-bad");
  assert.deepEqual(reverted.reverted, ["a"]);
  assert.equal((await store.read("a")).content, "v0");
});

test("trust: a handle opened with history off on a bucket that keeps history refuses to open, so no rollup erases kept versions", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  const s = new Scope({ run: "r" });
  await store.create("k", "about k", "v0", { scope: s });
  for (let i = 1; i <= 8; i++) await update(store, "k", `v${i}`, s);
  const e = await f.open({ history: false }).then(() => undefined, (e) => e);
  assert.ok(e instanceof ConfigError, String(e));
  assert.match(e.message, /"history": false/);
  assert.match(e.message, /KVH_memory/);
  assert.equal((await history(store, "k")).length, 9);
});

// What the previous release wrote: versions of chain format 1 (the key under the writer's prefix,
// no place in the chain), moved in a pack of format 1 that kept the writers' clocks.
async function plantFormat1(f: Fixture, key: string, n: number): Promise<void> {
  const js = jetstream(f.nc);
  let prev = "0".repeat(64);
  const moved: { rev: number; at: string; h: Record<string, string>; bytes: Uint8Array }[] = [];
  for (let i = 0; i < n; i++) {
    const bytes = ENCODER.encode(serializeEntry(`about ${key}`, `old ${i}`));
    const fields = {
      key,
      op: i === 0 ? "create" as const : "update" as const,
      at: new Date(Date.now() - (n - i) * 60_000).toISOString(),
      run: "run-old",
      via: "api",
      tainted: false,
    };
    const hash = chainHash(prev, fields, bytes, 1);
    const h: Record<string, string> = {
      "Agentmem-Op": fields.op,
      "Agentmem-At": fields.at,
      "Agentmem-Run": fields.run,
      "Agentmem-Via": fields.via,
      "Agentmem-Prev": prev,
      "Agentmem-Hash": hash,
    };
    const hdrs = headers();
    for (const [k, v] of Object.entries(h)) hdrs.set(k, v);
    const ack = await js.publish(`$KV.${BUCKET}.run.${key}`, bytes, { headers: hdrs });
    moved.push({ rev: ack.seq, at: fields.at, h, bytes });
    prev = hash;
  }
  // The old mover: every version but the newest into one pack, then purged from the subject.
  const packed = moved.slice(0, -1);
  const parts = packed.flatMap((v) => [
    ENCODER.encode(JSON.stringify({ rev: v.rev, at: v.at, len: v.bytes.length, h: v.h }) + "\n"),
    v.bytes,
  ]);
  const data = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  parts.reduce((at, p) => (data.set(p, at), at + p.length), 0);
  const ph = headers();
  ph.set("Agentmem-Pack", "1");
  ph.set("Agentmem-From", String(packed[0]!.rev));
  ph.set("Agentmem-To", String(packed.at(-1)!.rev));
  ph.set("Agentmem-Last-At", packed.at(-1)!.at);
  ph.set("Agentmem-Count", String(packed.length));
  ph.set("Agentmem-Last-Hash", packed.at(-1)!.h["Agentmem-Hash"]!);
  await js.publish(`$KVH.${BUCKET}.run.${key}`, data, { headers: ph });
  await purge(f, STREAM, `$KV.${BUCKET}.run.${key}`, moved.at(-1)!.rev);
}

test("trust: a bucket the previous release made (its max value size, versions of chain format 1) opens with a warning, still verifies under any prefix, new versions chain on, and check says what format 1 cannot prove", async () => {
  // The previous release's JETSTREAM_HISTORY_MIN_VALUE_SIZE.
  await using f = await natsFixture({ maxValueSize: 70_556 }, { history: true });
  await plantFormat1(f, "old", 5);
  const warnings: string[] = [];
  const store = await f.open({}, { onWarning: (w) => warnings.push(w) });
  assert.equal(warnings.length, 1, warnings.join("\n"));
  assert.match(warnings[0]!, /70556 bytes\) is below the 70608 bytes.*agentmem bucket init/);
  const whole = await f.open({ prefix: "" }, { onWarning: () => {} });
  assert.equal((await history(store, "old")).length, 5);
  for (const s of [store, whole]) {
    const audit = await auditStore(s);
    assert.deepEqual(audit.history, []);
    assert.ok(audit.notes?.some((n) => /format 1/.test(n)), JSON.stringify(audit.notes));
    assert.ok(audit.notes?.some((n) => /writer's clock/.test(n)), JSON.stringify(audit.notes));
  }
  const s = new Scope({ run: "run-new" });
  for (let i = 0; i < 20; i++) await update(store, "old", `new ${i}`, s);
  await eventually("the new versions moved", async () => (await packsOf(f, "old")) > 1);
  assert.deepEqual(await problemsOf(store), {});
  assert.deepEqual(await problemsOf(whole), {});
  const versions = await history(store, "old");
  assert.equal(versions.length, 25);
  assert.deepEqual(
    [versions[0]!.run, versions.at(-1)!.run, versions.at(-1)!.op],
    ["run-new", "run-old", "create"],
  );
});
