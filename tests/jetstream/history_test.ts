// The jetstream backend's history (issue 18) beyond the conformance cases: what the bucket holds
// (versions leave the listed subjects, a deleted key leaves nothing there), what bucket init makes
// and what opening a bucket without it says, retention, tamper evidence, and writers in other
// processes racing or killed at any point.

import assert from "node:assert/strict";
import { headers, type PublishOptions } from "@nats-io/nats-core";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import {
  auditStore,
  ConfigError,
  createJetStreamBucket,
  history,
  JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  NotFoundError,
  openJetStreamStore,
  ReadOnlyError,
  readVersion,
  redactVersion,
  restoreVersion,
  Scope,
  serializeEntry,
  type Store,
} from "../../mod.ts";
import { chainHash } from "../../store/chain.ts";
import { BUCKET, jetstreamTest as test, natsFixture } from "../_lib/jetstream_fixture.ts";
import { type Child, type ChildRecord, spawnDeno } from "../_lib/spawn.ts";
import type { HistoryJob } from "./_history_worker.ts";

const STREAM = `KV_${BUCKET}`;
const HISTORY = `KVH_${BUCKET}`;
const WORKER = new URL("./_history_worker.ts", import.meta.url).pathname;
// A key's subject holds at most this many messages once its versions were moved (keeper.ts).
const MOVE_EVERY = 16;

type Fixture = Awaited<ReturnType<typeof natsFixture>>;

// Messages per subject under `prefix` in `stream`.
async function perSubject(f: Fixture, stream: string, filter: string) {
  const jsm = await jetstreamManager(f.nc);
  const info = await jsm.streams.info(stream, { subjects_filter: filter });
  return info.state.subjects ?? {};
}

// Waits until `check` holds (moves run in the background), or fails after a few seconds.
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`never: ${what}`);
}

function worker(job: HistoryJob): Child {
  return spawnDeno(WORKER, [JSON.stringify(job)], {
    name: `history worker (${job.mode})`,
    permissions: ["--allow-net=127.0.0.1", "--allow-env", "--allow-read", "--allow-sys"],
  });
}

async function update(store: Store, key: string, content: string, scope: Scope) {
  await store.read(key, { scope });
  await store.update(key, `about ${key}`, content, { scope });
}

test("history: versions leave the listed subjects; a deleted key leaves nothing there, and its history stays", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  const scope = new Scope({ run: "r" });
  for (let k = 0; k < 10; k++) await store.create(`k${k}`, `about k${k}`, "v0", { scope });
  for (let v = 1; v < 20; v++) {
    for (let k = 0; k < 10; k++) await update(store, `k${k}`, `v${v}`, scope);
  }
  await store.create("gone", "about gone", "v0", { scope });
  await update(store, "gone", "v1", scope);
  assert.equal(await store.delete("gone", { scope }), true);
  // Versions moved out: a listing meets at most MOVE_EVERY messages of a key, and none of a
  // deleted key.
  await eventually("moves done", async () => {
    const subjects = await perSubject(f, STREAM, `$KV.${BUCKET}.run.>`);
    return Object.values(subjects).every((n) => n <= MOVE_EVERY) &&
      subjects[`$KV.${BUCKET}.run.gone`] === undefined;
  });
  const subjects = await perSubject(f, STREAM, `$KV.${BUCKET}.run.>`);
  assert.equal(subjects[`$KV.${BUCKET}.run.gone`], undefined, "the deleted key's subject is empty");
  assert.equal(Object.keys(subjects).length, 10);
  assert.equal((await store.list()).length, 10);
  // Every version is still there, in order, the deleted key's too.
  for (let k = 0; k < 10; k++) {
    const versions = await history(store, `k${k}`);
    assert.equal(versions.length, 20);
    assert.deepEqual(
      await Promise.all(
        versions.map(async (v) => (await readVersion(store, `k${k}`, v.revision)).content),
      ),
      Array.from({ length: 20 }, (_, i) => `v${19 - i}`),
    );
  }
  assert.deepEqual((await history(store, "gone")).map((v) => v.op), ["delete", "update", "create"]);
  assert.ok(Object.keys(await perSubject(f, HISTORY, `$KVH.${BUCKET}.run.>`)).length >= 10);
  assert.deepEqual((await auditStore(store)).history, []);
});

test("history: a handle's move over what it last learnt of the history, gone stale since another handle moved the key, loses and repeats no version", async () => {
  await using f = await natsFixture();
  const [a, b] = [await f.open(), await f.open()];
  const scope = new Scope({ run: "a" });
  // a learns the key has no history (its create's look) and writes it on; nobody else writes it.
  await a.create("k", "about k", "v0", { scope });
  for (let v = 1; v <= 2; v++) await update(a, "k", `v${v}`, scope);
  // b redacts a version: it moves the key's versions and writes its history subject again.
  const first = (await history(b, "k")).at(-1)!;
  await redactVersion(b, "k", first.revision, { reason: "a secret" });
  // a deletes it: its move starts from what it learnt at the create, which b made stale.
  assert.equal(await a.delete("k", { scope }), true);
  await eventually("a's move done", async () => {
    const subjects = await perSubject(f, STREAM, `$KV.${BUCKET}.run.k`);
    return subjects[`$KV.${BUCKET}.run.k`] === undefined;
  });
  assert.deepEqual((await history(a, "k")).map((v) => v.op), [
    "delete",
    "update",
    "update",
    "create",
  ]);
  // Each version is in exactly one pack, and the last pack's state counts them all.
  const packs = await packsOf(f, "k");
  for (let i = 1; i < packs.length; i++) assert.ok(packs[i]!.from > packs[i - 1]!.to, "overlap");
  assert.equal(packs.reduce((n, p) => n + p.count, 0), 4);
  assert.equal(packs.at(-1)!.held, 4);
  assert.deepEqual((await auditStore(a)).history, []);
});

// The packs of `key` in the history stream: the revisions each holds, its count, and the
// number of versions the key's state says are held after it.
async function packsOf(f: Fixture, key: string) {
  const jsm = await jetstreamManager(f.nc);
  const out: { from: number; to: number; count: number; held: number }[] = [];
  const subject = `$KVH.${BUCKET}.run.${key}`;
  const last = (await jsm.streams.info(HISTORY)).state.last_seq;
  for (let seq = 1; seq <= last; seq++) {
    const m = await jsm.streams.getMessage(HISTORY, { seq }).catch(() => null);
    if (m?.subject !== subject || m.header.get("Agentmem-Pack") !== "2") continue;
    const n = (name: string) => Number(m.header.get(name));
    out.push({
      from: n("Agentmem-From"),
      to: n("Agentmem-To"),
      count: n("Agentmem-Count"),
      held: n("Agentmem-Held"),
    });
  }
  return out;
}

test("history: a restore over a delete marker that the deleting handle empties between the look and the write looks again and restores", async () => {
  await using f = await natsFixture();
  const a = await f.open();
  const scope = new Scope({ run: "r" });
  await a.create("b", "about b", "kept", { scope });
  const [first] = await history(a, "b");
  // Another handle whose writes of b wait until b's subject is empty (what a's keeper does
  // EMPTY_AFTER_MS after its move), each noting the revision it expected the subject to end at.
  const subject = `$KV.${BUCKET}.run.b`;
  const jsm = await jetstreamManager(f.nc);
  const emptied = async () => {
    await eventually("b's subject emptied", async () => {
      const info = await jsm.streams.info(STREAM, { subjects_filter: subject });
      return info.state.subjects?.[subject] === undefined;
    });
  };
  const expected: string[] = [];
  const conn = await f.connect();
  const publish = (s: string, payload?: Uint8Array, opts?: PublishOptions) => {
    if (s !== subject) return conn.publish(s, payload, opts);
    expected.push(opts?.headers?.get("Nats-Expected-Last-Subject-Sequence") ?? "");
    void emptied().then(() => conn.publish(s, payload, opts));
  };
  const nc = new Proxy(conn, {
    get: (target, p) => {
      if (p === "publish") return publish;
      const v = Reflect.get(target, p, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  const b = await openJetStreamStore({ bucket: BUCKET, prefix: "run" }, { nc });
  assert.equal(await a.delete("b", { scope }), true);
  await restoreVersion(b, "b", first!.revision, { scope });
  assert.equal((await b.read("b")).content, "kept");
  // The first write went over the marker, which was emptied before it arrived; the second over
  // the emptied subject.
  assert.equal(expected.length, 2, expected.join(", "));
  assert.notEqual(expected[0], "0");
  assert.equal(expected[1], "0");
  assert.deepEqual((await history(b, "b")).map((v) => v.op), ["create", "delete", "create"]);
});

test("history: bucket init makes what history needs; a NATS KV bucket is refused saying what is missing, and bucket init adds it keeping every memory", async () => {
  await using f = await natsFixture({ history: 1 });
  const old = await f.open({ history: false });
  await old.create("kept", "written before history", "old");
  const e = await f.open({ history: undefined }).then(() => undefined, (e) => e);
  assert.ok(e instanceof ConfigError, String(e));
  assert.match(e.message, /keeps 1 message per key/);
  assert.match(e.message, /history stream KVH_memory does not exist/);
  assert.match(e.message, /agentmem bucket init --bucket=memory/);
  assert.match(e.message, /"history": false/);
  const settings = {
    bucket: BUCKET,
    replicas: 1,
    storage: "file" as const,
    maxValueSize: JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  };
  assert.equal(await createJetStreamBucket(f.nc, settings), "upgraded");
  assert.equal(await createJetStreamBucket(f.nc, settings), "exists");
  const store = await f.open({ history: undefined });
  assert.deepEqual(await store.read("kept"), {
    description: "written before history",
    content: "old",
  });
  // A memory from before history has no versions, and check does not call it damaged.
  assert.deepEqual(await history(store, "kept"), []);
  assert.deepEqual((await auditStore(store)).history, []);
  const scope = new Scope({ run: "after" });
  await update(store, "kept", "new", scope);
  assert.deepEqual((await history(store, "kept")).map((v) => [v.op, v.run]), [["update", "after"]]);
});

test("history: retention keeps the newest `versions` when `days` is 0, and no fewer", async () => {
  await using f = await natsFixture();
  const store = await f.open({ history: { versions: 3, days: 0 } });
  const scope = new Scope();
  await store.create("k", "about k", "v0", { scope });
  for (let v = 1; v < 12; v++) await update(store, "k", `v${v}`, scope);
  const versions = await history(store, "k");
  assert.deepEqual(
    await Promise.all(
      versions.map(async (v) => (await readVersion(store, "k", v.revision)).content),
    ),
    ["v11", "v10", "v9"],
  );
  // The oldest is no longer kept for this store: NotFoundError.
  const all = await history(await f.open(), "k");
  assert.ok(all.length >= 3);
  await assert.rejects(readVersion(store, "k", all.at(-1)!.revision), NotFoundError);
});

test("history: check names an edited version, a missing link, an unrecorded write and a damaged record, by key", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  const scope = new Scope({ run: "r" });
  for (const key of ["clean", "edited", "linked", "hand", "bad"]) {
    await store.create(key, `about ${key}`, "v1", { scope });
    await update(store, key, "v2", scope);
  }
  const js = jetstream(f.nc);
  const head = async (key: string) =>
    (await (await jetstreamManager(f.nc)).streams.getMessage(STREAM, {
      last_by_subj: `$KV.${BUCKET}.run.${key}`,
    }))!;
  const copy = (from: Awaited<ReturnType<typeof head>>, change: Record<string, string>) => {
    const h = headers();
    for (const [k, v] of from.header) if (k.startsWith("Agentmem-")) h.set(k, v[0]!);
    for (const [k, v] of Object.entries(change)) h.set(k, v);
    return h;
  };
  // Edited: the record of the newest version, over other bytes.
  const edited = await head("edited");
  await js.publish(
    `$KV.${BUCKET}.run.edited`,
    new TextEncoder().encode(serializeEntry("about edited", "planted")),
    {
      headers: copy(edited, {}),
    },
  );
  // Missing: a version whose own hash holds, chained to nothing the key has.
  const linked = await head("linked");
  const planted = new TextEncoder().encode(serializeEntry("about linked", "planted"));
  const prev = "f".repeat(64);
  const get = (name: string) => linked.header.get(name) || undefined;
  const seq = Number(get("Agentmem-Seq")) + 1;
  const hash = chainHash(
    prev,
    {
      key: "run.linked",
      seq,
      op: "update",
      at: get("Agentmem-At")!,
      run: get("Agentmem-Run"),
      actor: get("Agentmem-Actor"),
      via: get("Agentmem-Via")!,
      callId: get("Agentmem-Call"),
      tainted: get("Agentmem-Tainted") === "true",
    },
    planted,
    2,
  );
  await js.publish(`$KV.${BUCKET}.run.linked`, planted, {
    headers: copy(linked, {
      "Agentmem-Seq": String(seq),
      "Agentmem-Prev": prev,
      "Agentmem-Hash": hash,
    }),
  });
  // Unrecorded: a write without a record (nats kv put, by hand).
  await f.kv.put("run.hand", serializeEntry("about hand", "by hand"));
  // Damaged: a record with a bad field.
  const bad = await head("bad");
  await js.publish(`$KV.${BUCKET}.run.bad`, new TextEncoder().encode(serializeEntry("x", "y")), {
    headers: copy(bad, { "Agentmem-Via": "no spaces allowed" }),
  });
  const problems = (await auditStore(store)).history ?? [];
  const byKey: Record<string, string[]> = {};
  for (const p of problems) (byKey[p.key] ??= []).push(p.problem);
  // The planted bytes under a copied record break its hash, and so its successor's link.
  assert.ok(byKey.edited?.includes("edited"), JSON.stringify(problems));
  assert.deepEqual(byKey.linked, ["missing"]);
  assert.deepEqual(byKey.hand, ["unrecorded"]);
  assert.deepEqual(byKey.bad, ["damaged"]);
  assert.equal(byKey.clean, undefined);
  // The history of a key with a damaged record leaves it out and names it.
  const bads = await history(store, "bad");
  assert.deepEqual(bads.map((v) => v.op), ["update", "create"]);
  assert.deepEqual(bads.problems.map((p) => p.problem), ["damaged"]);
});

test("history: 4 processes racing read -> update increments leave exactly one version per acknowledged update", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  await store.create("counter", "a shared counter", "0", { scope: new Scope({ run: "init" }) });
  const children = Array.from(
    { length: 4 },
    () => worker({ servers: f.server.url, bucket: BUCKET, mode: "counter", count: 25 }),
  );
  try {
    await Promise.all(children.map((c) => c.waitFor("ready")));
    await Promise.all(children.map((c) => c.waitFor("done")));
    const acks = children.flatMap((c) => c.records.filter((l) => l.t === "ack"));
    assert.equal(acks.length, 100);
    const versions = await history(store, "counter");
    assert.equal(versions.length, 101, "one version per acknowledged update, and the create");
    assert.equal(new Set(versions.map((v) => v.revision)).size, 101);
    const contents = await Promise.all(
      versions.map(async (v) => (await readVersion(store, "counter", v.revision)).content),
    );
    assert.deepEqual(contents, Array.from({ length: 101 }, (_, i) => String(100 - i)));
    assert.equal((await store.read("counter")).content, "100");
    assert.deepEqual(
      new Set(versions.slice(0, 100).map((v) => v.run?.startsWith("counter-"))),
      new Set([true]),
    );
    assert.deepEqual((await auditStore(store)).history, []);
  } finally {
    for (const c of children) await c[Symbol.asyncDispose]();
  }
});

test("history: a writer SIGKILLed at any point leaves history and head in agreement, every acknowledged write with its version", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  const acked: ChildRecord[] = [];
  for (let round = 0; round < 8; round++) {
    await using child = worker({
      servers: f.server.url,
      bucket: BUCKET,
      mode: "writer",
      seed: 1 + round,
    });
    await child.waitFor("ready");
    await new Promise((resolve) => setTimeout(resolve, 100 + 60 * round));
    child.kill("SIGKILL");
    await child.finished();
    acked.push(...child.records.filter((l) => l.t === "ack"));
  }
  assert.ok(acked.length > 20, `only ${acked.length} writes were acknowledged`);
  for (let k = 0; k < 8; k++) {
    const key = `k${k}`;
    const versions = await history(store, key);
    const contents = await Promise.all(
      versions.map(async (v) =>
        v.op === "delete" ? "" : (await readVersion(store, key, v.revision)).content
      ),
    );
    // Every acknowledged write of the key has its version (a write that was not acknowledged
    // may have one too: it landed before the kill).
    for (const a of acked.filter((a) => a.key === key)) {
      assert.ok(
        versions.some((v, i) => v.op === a.op && contents[i] === a.content),
        `${key}: the acknowledged ${a.op} of ${a.content} has no version`,
      );
    }
    assert.equal(
      new Set(versions.map((v) => v.revision)).size,
      versions.length,
      `${key}: duplicates`,
    );
    // The head agrees with the newest version.
    const head = await store.read(key).then((e) => e.content, (e) => e);
    if (versions.length === 0) assert.ok(head instanceof NotFoundError);
    else if (versions[0]!.op === "delete") {
      assert.ok(head instanceof NotFoundError, `${key}: ${head}`);
    } else assert.equal(head, contents[0], key);
  }
  assert.deepEqual((await auditStore(store)).history, []);
  assert.ok((await store.list()).length <= 8);
});

test("history: an acknowledged delete stays deleted, with its history, when the server is SIGKILLed and restarted", async () => {
  for (const version of ["2.9.10", "2.10.27"]) {
    const { serverBinary } = await import("../_lib/binaries.ts");
    const binary = serverBinary(version);
    if (binary === undefined) continue;
    const { natsConnect, startNatsServer } = await import("../_lib/nats_server.ts");
    await using server = await startNatsServer({ binary });
    let nc = await natsConnect(server.url);
    await createJetStreamBucket(nc, {
      bucket: BUCKET,
      replicas: 1,
      storage: "file",
      maxValueSize: JETSTREAM_HISTORY_MIN_VALUE_SIZE,
    });
    for (let i = 0; i < 6; i++) {
      const store = await openJetStreamStore({ bucket: BUCKET, prefix: "run" }, { nc });
      const scope = new Scope();
      // Another key's write between the key's own: the layout in which a purge that reaches the
      // stream's first message came back in part after a crash (nats-server 2.10.27).
      await store.create(`k${i}`, "deleted before the crash", "v1", { scope });
      await store.create(`between${i}`, "written between", "x");
      await update(store, `k${i}`, "v2", scope);
      assert.equal(await store.delete(`k${i}`, { scope }), true);
      for (let j = 0; j < 3; j++) await store.create(`other${i}-${j}`, "written after", "x");
      await server.kill("SIGKILL");
      await nc.close().catch(() => {});
      await server.restart();
      nc = await natsConnect(server.url);
      const after = await openJetStreamStore({ bucket: BUCKET, prefix: "run" }, { nc });
      await assert.rejects(after.read(`k${i}`), NotFoundError, `${version}: k${i} came back`);
      assert.deepEqual((await history(after, `k${i}`)).map((v) => v.op), [
        "delete",
        "update",
        "create",
      ]);
    }
    await nc.close();
  }
});

test("history: a store opened with history off in a bucket made for history is refused for writing; read-only it opens, reads, and answers history() with how to turn it on", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  await store.create("k", "about k", "v0", { scope: new Scope() });
  await assert.rejects(
    f.open({ history: false }),
    (e: Error) => e instanceof ConfigError && /"history": false/.test(e.message),
  );
  const reader = await f.open({ history: false, readOnly: true });
  assert.equal((await reader.read("k")).content, "v0");
  await assert.rejects(reader.update("k", "about k", "v1"), ReadOnlyError);
  await assert.rejects(
    history(reader, "k"),
    (e: Error) => e instanceof ConfigError && /keeps no history/.test(e.message),
  );
  assert.deepEqual(await perSubject(f, STREAM, `$KV.${BUCKET}.run.>`), {
    [`$KV.${BUCKET}.run.k`]: 1,
  });
});
