// The jetstream backend: the shared contract, then what is peculiar to it: construction
// refusals, the bucket size edge, read-before-update scope rules, markers and planted entries,
// consumers, the borrowed connection, deadlines and signals.

import assert from "node:assert/strict";
import { jetstreamManager } from "@nats-io/jetstream";
import { headers, type NatsConnection } from "@nats-io/nats-core";
import { Kvm } from "@nats-io/kv";
import {
  ConfigError,
  CorruptError,
  createJetStreamBucket,
  ExistsError,
  JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  JETSTREAM_MIN_VALUE_SIZE,
  MAX_CONTENT_BYTES,
  MAX_DESCRIPTION_RUNES,
  MAX_ENTRY_BYTES,
  type MemoryError,
  NotFoundError,
  openJetStreamStore,
  openStore,
  Scope,
  serializeEntry,
  StaleError,
  UnavailableError,
} from "../../mod.ts";
import { conformance } from "../conformance.ts";
import { BUCKET, natsFixture } from "../_lib/jetstream_fixture.ts";
import { streamHits } from "../_lib/raw_hits.ts";
import { natsConnect, needsNats, startNatsServer } from "../_lib/nats_server.ts";

const NATS = needsNats();
const STREAM = `KV_${BUCKET}`;
const ENCODER = new TextEncoder();
// The largest valid entry this serializer produces: 500 four-byte runes of description (YAML
// leaves them unescaped) and a body at the content cap.
const BIG_DESCRIPTION = "\u{1F600}".repeat(MAX_DESCRIPTION_RUNES);
const BIG_CONTENT = "x".repeat(MAX_CONTENT_BYTES - 4) + "\u{1F600}";
// The highest revision JavaScript represents exactly, with room for a few writes: 16 digits, the
// longest expected-revision header a write of this backend can carry.
const HIGH_REVISION = Number.MAX_SAFE_INTEGER - 100;

// With history (the default), in a bucket made for it; and with history off, in a bucket made
// the NATS KV way.
for (const history of [true, false]) {
  conformance({
    backend: "jetstream",
    ...(history ? {} : { label: "jetstream, history off" }),
    enforcesReadBeforeUpdate: true,
    history,
    testOptions: NATS,
    open: async () => {
      const f = await natsFixture({}, { history });
      return {
        store: await f.open(),
        peer: () => f.open(),
        reopen: (more) => f.open(more),
        rawHits: (marker) => streamHits(f.nc, BUCKET, marker),
        plant: async (key, bytes) => void await f.kv.put(`run.${key}`, bytes),
        cleanup: () => f.cleanup(),
      };
    },
  });
}

function test(name: string, fn: () => Promise<void>): void {
  Deno.test({
    name: `[jetstream] ${name}`,
    ...NATS,
    sanitizeOps: false,
    sanitizeResources: false,
    fn,
  });
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  return await p.then(
    (v) => assert.fail(`expected a failure, got ${JSON.stringify(v)}`),
    (e) => e,
  );
}

async function expectError<T extends MemoryError>(
  p: Promise<unknown>,
  type: new (...args: never[]) => T,
  pattern?: RegExp,
): Promise<T> {
  const e = await failure(p);
  assert.ok(e instanceof type, `expected ${type.name}, got ${e instanceof Error ? e.stack : e}`);
  if (pattern) assert.match(e.message, pattern);
  assertNoAddress(e.message);
  return e;
}

function assertNoAddress(message: string): void {
  assert.doesNotMatch(message, /nats:\/\/|127\.0\.0\.1|localhost|:\d{4,5}\b/);
}

async function rawPublish(
  f: { nc: NatsConnection },
  key: string,
  payload: Uint8Array,
  expected?: number,
) {
  const { jetstream } = await import("@nats-io/jetstream");
  const h = headers();
  if (expected !== undefined) h.set("Nats-Expected-Last-Subject-Sequence", `${expected}`);
  return jetstream(f.nc).publish(`$KV.${BUCKET}.${key}`, payload, { headers: h });
}

// ---------------------------------------------------------------------------------------------
// Construction

test("openJetStreamStore() refuses a missing bucket with a working nats kv add command", async () => {
  const server = await startNatsServer();
  const nc = await natsConnect(server.url);
  try {
    const e = await expectError(
      openJetStreamStore({ bucket: "notes", prefix: "p" }, { nc }),
      ConfigError,
      /does not exist/,
    );
    assert.ok(
      e.message.includes(
        `nats kv add notes --history=1 --storage=file --replicas=1 --max-value-size=${JETSTREAM_MIN_VALUE_SIZE}`,
      ),
      e.message,
    );
    assert.match(e.message, /new Kvm\(nc\)\.create\("notes"/);
    // The settings the message gives pass every check.
    await new Kvm(nc).create("notes", {
      history: 1,
      replicas: 1,
      maxValueSize: JETSTREAM_MIN_VALUE_SIZE,
    });
    // (A bucket made the NATS KV way keeps one message per key: a store with history off.)
    const store = await openJetStreamStore({ bucket: "notes", prefix: "p", history: false }, {
      nc,
    });
    await store.create("k", "d", "c");
    // The command the message names first makes a bucket with history.
    assert.match(e.message, /agentmem bucket init --bucket=notes/);
  } finally {
    await nc.close();
    await server.stop();
  }
});

test("openJetStreamStore() refuses a bucket with a TTL", async () => {
  await using f = await natsFixture({ ttl: 60_000 });
  await expectError(f.open(), ConfigError, /TTL of 60 seconds/);
});

test(`openJetStreamStore() refuses a max value size of ${JETSTREAM_MIN_VALUE_SIZE - 1} and accepts ${JETSTREAM_MIN_VALUE_SIZE} or unlimited`, async () => {
  assert.equal(JETSTREAM_MIN_VALUE_SIZE, MAX_ENTRY_BYTES + 67);
  for (const size of [1024, MAX_ENTRY_BYTES, JETSTREAM_MIN_VALUE_SIZE - 1]) {
    await using f = await natsFixture({ maxValueSize: size });
    const e = await expectError(
      f.open(),
      ConfigError,
      new RegExp(`max value size is ${size} bytes`),
    );
    assert.match(
      e.message,
      new RegExp(`nats stream edit ${STREAM} --max-msg-size=${JETSTREAM_MIN_VALUE_SIZE}`),
    );
    // What the advice does, done through the API: the bucket then opens.
    const jsm = await jetstreamManager(f.nc);
    const { config } = await jsm.streams.info(STREAM);
    await jsm.streams.update(STREAM, { ...config, max_msg_size: JETSTREAM_MIN_VALUE_SIZE });
    await f.open();
  }
  for (const size of [JETSTREAM_MIN_VALUE_SIZE, JETSTREAM_MIN_VALUE_SIZE + 1, -1]) {
    await using f = await natsFixture({ maxValueSize: size });
    await f.open();
  }
});

test("the edge bucket takes the largest valid entry through create() and update() at 16-digit revisions", async () => {
  await using f = await natsFixture({ maxValueSize: JETSTREAM_MIN_VALUE_SIZE });
  const jsm = await jetstreamManager(f.nc);
  await jsm.streams.purge(STREAM, { seq: HIGH_REVISION });
  const store = await f.open();
  const bytes = ENCODER.encode(serializeEntry(BIG_DESCRIPTION, BIG_CONTENT)).length;
  assert.ok(bytes <= MAX_ENTRY_BYTES);
  const scope = new Scope();
  await store.create("big", BIG_DESCRIPTION, BIG_CONTENT, { scope });
  assert.equal(String((await f.kv.get("run.big"))?.revision).length, 16);
  await store.update("big", BIG_DESCRIPTION, BIG_CONTENT.replace("x", "y"), { scope });
  // A create over a delete marker expects the marker's 16-digit revision.
  assert.equal(await store.delete("big", { scope }), true);
  await store.create("big", BIG_DESCRIPTION, BIG_CONTENT, { scope });
  await store.update("big", BIG_DESCRIPTION, BIG_CONTENT, { scope });
  assert.deepEqual(await store.read("big"), { description: BIG_DESCRIPTION, content: BIG_CONTENT });
});

test("the threshold is exact: the server counts a write's header against the max value size", async () => {
  // A bound-sized payload with the longest header fits the edge bucket, one byte more does not;
  // the same write does not fit a bucket one byte smaller, which construction refuses.
  for (const size of [JETSTREAM_MIN_VALUE_SIZE, JETSTREAM_MIN_VALUE_SIZE - 1]) {
    await using f = await natsFixture({ maxValueSize: size });
    const jsm = await jetstreamManager(f.nc);
    await jsm.streams.purge(STREAM, { seq: HIGH_REVISION });
    const first = await rawPublish(f, "edge", new Uint8Array(10), 0);
    assert.equal(String(first.seq).length, 16);
    const full = rawPublish(f, "edge", new Uint8Array(MAX_ENTRY_BYTES), first.seq);
    if (size === JETSTREAM_MIN_VALUE_SIZE) {
      const ack = await full;
      const over = await failure(
        rawPublish(f, "edge", new Uint8Array(MAX_ENTRY_BYTES + 1), ack.seq),
      );
      assert.equal((over as { code?: number }).code, 10054);
    } else {
      assert.equal(((await failure(full)) as { code?: number }).code, 10054);
    }
  }
});

test("openJetStreamStore() refuses a bucket that evicts old entries when full", async () => {
  await using f = await natsFixture({ max_bytes: 10_000_000 });
  const jsm = await jetstreamManager(f.nc);
  const info = await jsm.streams.info(STREAM);
  await jsm.streams.update(STREAM, { ...info.config, discard: "old" });
  const e = await expectError(f.open(), ConfigError, /discards its oldest entries/);
  assert.match(e.message, new RegExp(`nats stream edit ${STREAM} --discard=new`));
  await jsm.streams.update(STREAM, { ...info.config, discard: "new" });
  await f.open();
});

test("openJetStreamStore() needs a prefix or an identity, and a prefix is a dot-free legal key", async () => {
  await using f = await natsFixture();
  const nc = await f.connect();
  const open = (options: Record<string, unknown>, identity?: unknown) =>
    openJetStreamStore({ bucket: BUCKET, ...options }, { nc, identity } as never);
  await expectError(open({}), ConfigError, /neither option "prefix" nor an identity/);
  for (const prefix of ["a.b", "a/b", ".x", "a b", "é", "k".repeat(201), "*", ">"]) {
    await expectError(open({ prefix }), ConfigError, /option "prefix"/);
  }
  await expectError(open({}, "me@host"), ConfigError, /the identity/);
  await expectError(open({}, 42), ConfigError, /must be a string/);
  assert.equal((await open({}, "agent-7")).info().location, `${BUCKET}/agent-7`);
  assert.equal((await open({ prefix: "chosen" }, "agent-7")).info().location, `${BUCKET}/chosen`);
  assert.equal((await open({ prefix: "" }, "agent-7")).info().location, BUCKET);
});

test("openJetStreamStore() decodes its options strictly", async () => {
  await using f = await natsFixture();
  const nc = await f.connect();
  const open = (options: unknown) => openJetStreamStore(options as never, { nc });
  await expectError(
    open({ bucket: BUCKET, prefix: "p", ttl: 0 }),
    ConfigError,
    /unknown option "ttl"; allowed options: "bucket", "prefix", "readBeforeUpdate", "timeout"/,
  );
  await expectError(open({ prefix: "p" }), ConfigError, /missing required option "bucket"/);
  await expectError(open({ bucket: 7, prefix: "p" }), ConfigError, /"bucket" must be a string/);
  await expectError(open({ bucket: "a.b", prefix: "p" }), ConfigError, /bucket name/);
  await expectError(open({ bucket: BUCKET, prefix: "p", readBeforeUpdate: "no" }), ConfigError);
  for (const timeout of [0, -1, 1.5, 600_001]) {
    await expectError(open({ bucket: BUCKET, prefix: "p", timeout }), ConfigError, /"timeout"/);
  }
});

test("openJetStreamStore() refuses a missing, foreign or closed connection", async () => {
  await using f = await natsFixture();
  const open = (deps: unknown) =>
    openJetStreamStore({ bucket: BUCKET, prefix: "p" }, deps as never);
  await expectError(open(undefined), ConfigError, /dependencies/);
  await expectError(open({}), ConfigError, /"nc" must be a NATS connection/);
  await expectError(open({ nc: { request: 1 } }), ConfigError, /"nc" must be a NATS connection/);
  const lookalike = { request() {}, subscribe() {}, isClosed: () => false };
  await expectError(open({ nc: lookalike }), ConfigError, /cannot use dependency "nc"/);
  const nc = await f.connect();
  await nc.close();
  await expectError(open({ nc }), ConfigError, /closed/);
});

test("openJetStreamStore() refuses a server without JetStream", async () => {
  const server = await startNatsServer({ jetstream: false });
  const nc = await natsConnect(server.url);
  try {
    await expectError(
      openJetStreamStore({ bucket: BUCKET, prefix: "p" }, { nc }),
      ConfigError,
      /JetStream is not enabled/,
    );
  } finally {
    await nc.close();
    await server.stop();
  }
});

test("openJetStreamStore() gives up on a hung server within its 10-second bound", async () => {
  await using f = await natsFixture();
  const nc = await f.connect();
  await f.server.pause();
  try {
    const started = Date.now();
    await expectError(
      openJetStreamStore({ bucket: BUCKET, prefix: "p" }, { nc }),
      UnavailableError,
      /did not answer within 10 seconds/,
    );
    // An upper bound against hanging, not a speed claim.
    assert.ok(Date.now() - started < 30_000);
  } finally {
    f.server.resume();
  }
});

test("openStore() opens the registered jetstream backend with strict options", async () => {
  await using f = await natsFixture();
  const nc = await f.connect();
  const store = await openStore(
    { backend: "jetstream", options: { bucket: BUCKET } },
    { nc, identity: "agent-1" },
  );
  assert.deepEqual(store.info(), { backend: "jetstream", location: `${BUCKET}/agent-1` });
  await store.create("k", "d", "c");
  assert.equal((await f.kv.get("agent-1.k"))?.operation, "PUT");
  await expectError(
    openStore({ backend: "jetstream", options: { bucket: BUCKET, dir: "/tmp" } }, { nc }),
    ConfigError,
    /unknown option "dir"/,
  );
  const readOnly = await openStore(
    { backend: "jetstream", options: { bucket: BUCKET, prefix: "agent-1" }, readOnly: true },
    { nc },
  );
  assert.deepEqual(await readOnly.list(), [{ key: "k", description: "d" }]);
});

test("the backend's module loads the NATS client only when a store opens", async () => {
  const source = await Deno.readTextFile(new URL("../../backends/jetstream.ts", import.meta.url));
  const staticImports = [
    ...source.matchAll(/^import\s+(type\s+)?[^;]*?from\s+"(@nats-io\/[^"]+)"/gms),
  ];
  assert.ok(staticImports.length > 0);
  for (const m of staticImports) assert.ok(m[1], `${m[2]} must be imported as a type only`);
  assert.match(source, /import\("@nats-io\/jetstream"\)/);
});

// ---------------------------------------------------------------------------------------------
// Scope rules

test("scope: create() grants, list() and a null or missing scope grant nothing", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  const creator = new Scope();
  await store.create("k", "v1", "v1", { scope: creator });
  await store.update("k", "v2", "v2", { scope: creator });
  const lister = new Scope();
  assert.deepEqual(await store.list({ scope: lister }), [{ key: "k", description: "v2" }]);
  assert.equal(lister.size, 0);
  await expectError(store.update("k", "x", "x", { scope: lister }), StaleError, /has not read it/);
  await expectError(store.update("k", "x", "x", { scope: null }), StaleError);
  await expectError(store.update("k", "x", "x"), StaleError);
  assert.equal((await store.read("k")).content, "v2");
});

test("scope: a revision that moved is refused, and a re-read authorizes again", async () => {
  await using f = await natsFixture();
  const [mine, theirs] = [await f.open(), await f.open()];
  await mine.create("k", "v1", "v1");
  const scope = new Scope();
  await mine.read("k", { scope });
  const other = new Scope();
  await theirs.read("k", { scope: other });
  await theirs.update("k", "v2", "v2", { scope: other });
  await expectError(mine.update("k", "v3", "v3", { scope }), StaleError, /changed or was deleted/);
  assert.equal((await mine.read("k", { scope })).content, "v2");
  await mine.update("k", "v3", "v3", { scope });
  // Deleted and re-created under the same key: the old revision is stale.
  const old = Scope.restore(scope.snapshot());
  await theirs.delete("k");
  await theirs.create("k", "v4", "v4");
  await expectError(mine.update("k", "v5", "v5", { scope: old }), StaleError);
  assert.equal((await mine.read("k")).content, "v4");
});

test("scope: delete() drops the revision, whether or not the key existed", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  const scope = new Scope();
  await store.create("k", "d", "c", { scope });
  assert.equal(scope.size, 1);
  assert.equal(await store.delete("k", { scope }), true);
  assert.equal(scope.size, 0);
  await store.create("k", "d", "c", { scope });
  await (await f.open()).delete("k");
  assert.equal(await store.delete("k", { scope }), false);
  assert.equal(scope.size, 0);
});

test("scope: snapshot -> JSON -> restore authorizes exactly the same writes", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  await store.create("a", "a", "a");
  await store.create("b", "b", "b");
  const scope = new Scope();
  await store.read("a", { scope });
  const resumed = Scope.restore(JSON.parse(JSON.stringify(scope.snapshot())));
  await expectError(store.update("b", "x", "x", { scope: resumed }), StaleError);
  await store.update("a", "a2", "a2", { scope: resumed });
  // The original scope's revision is now stale: the resumed run wrote since.
  await expectError(store.update("a", "a3", "a3", { scope }), StaleError);
  assert.equal((await store.read("a")).content, "a2");
});

test("scope: a forged revision 0 never authorizes a write", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  // The namespace names the bucket instance (its stream's creation time) and the prefix.
  const namespace = `jetstream:${BUCKET}@${(await f.kv.status()).streamInfo.created}/run`;
  const probe = new Scope();
  await store.create("probe", "d", "c", { scope: probe });
  assert.deepEqual(Object.keys(probe.snapshot().revisions), [namespace]);
  const forged = Scope.restore({
    kind: "agentmem.scope",
    version: 1,
    revisions: { [namespace]: { fresh: 0 } },
  });
  await expectError(store.update("fresh", "x", "x", { scope: forged }), StaleError);
  await expectError(store.read("fresh"), NotFoundError);
});

test("scope: revisions never cross prefixes or buckets", async () => {
  await using f = await natsFixture();
  await createJetStreamBucket(f.nc, {
    bucket: "other",
    replicas: 1,
    storage: "file",
    maxValueSize: JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  });
  const alice = await f.open({ prefix: "alice" });
  const bob = await f.open({ prefix: "bob" });
  const flat = await f.open({ prefix: "" });
  const elsewhere = await f.open({ bucket: "other", prefix: "alice" });
  await alice.create("k", "alice's", "alice");
  await bob.create("k", "bob's", "bob");
  await elsewhere.create("k", "other bucket", "other");
  const scope = new Scope();
  await alice.read("k", { scope });
  await expectError(bob.update("k", "x", "x", { scope }), StaleError);
  await expectError(elsewhere.update("k", "x", "x", { scope }), StaleError);
  await flat.read("bob.k", { scope });
  await expectError(bob.update("k", "x", "x", { scope }), StaleError);
  assert.equal((await bob.read("k")).content, "bob");
  assert.equal((await elsewhere.read("k")).content, "other");
  await alice.update("k", "mine", "mine", { scope });
  // Each prefix lists only its own keys; the flat keyspace is the whole bucket.
  assert.deepEqual(await alice.list(), [{ key: "k", description: "mine" }]);
  assert.deepEqual(await bob.list(), [{ key: "k", description: "bob's" }]);
  assert.deepEqual(await flat.list(), [
    { key: "alice.k", description: "mine" },
    { key: "bob.k", description: "bob's" },
  ]);
  // "alice" and "alice2" are separate keyspaces.
  const alice2 = await f.open({ prefix: "alice2" });
  assert.deepEqual(await alice2.list(), []);
});

test("readBeforeUpdate: false replaces without a read and creates a missing key", async () => {
  await using f = await natsFixture();
  const store = await f.open({ readBeforeUpdate: false });
  await store.update("new", "made by update", "1");
  await store.update("new", "replaced", "2");
  assert.deepEqual(await store.read("new"), { description: "replaced", content: "2" });
  const scope = new Scope();
  await store.update("other", "d", "c", { scope });
  assert.equal(scope.size, 1);
  // A revision held by a scope grants nothing extra and stale ones do not block.
  await (await f.open()).delete("other");
  await store.update("other", "again", "c", { scope });
  assert.equal((await store.read("other")).description, "again");
});

// ---------------------------------------------------------------------------------------------
// What is in the bucket

test("DEL and PURGE markers count as absent everywhere", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  for (const op of ["delete", "purge"] as const) {
    const key = `gone-${op}`;
    await store.create(key, "d", "c");
    await f.kv[op](`run.${key}`);
    await expectError(store.read(key), NotFoundError);
    assert.deepEqual(await store.list(), []);
    assert.equal(await store.delete(key), false);
    await expectError(store.update(key, "x", "x", { scope: new Scope() }), StaleError);
    await store.create(key, "again", "c");
    assert.equal((await store.read(key)).description, "again");
    await store.delete(key);
  }
});

test("list() skips keys that are not legal and entries read() cannot parse", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  await store.create("good", "fine", "c");
  await f.kv.put("run.bad", "no header here");
  await f.kv.put("run.a/b", serializeEntry("slash", "c"));
  await f.kv.put("run.x_", serializeEntry("legal", "planted"));
  await f.kv.put("runner.k", serializeEntry("another prefix", "c"));
  assert.deepEqual(await store.list(), [
    { key: "good", description: "fine" },
    { key: "x_", description: "legal" },
  ]);
  await expectError(store.read("bad"), CorruptError);
  // A planted entry that parses is a memory like any other.
  assert.deepEqual(await store.read("x_"), { description: "legal", content: "planted" });
});

test("create() over a key a concurrent writer re-created reports ExistsError", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  await store.create("k", "d", "c");
  await store.delete("k");
  await f.kv.put("run.k", serializeEntry("theirs", "c"));
  await expectError(store.create("k", "mine", "c"), ExistsError);
  assert.equal((await store.read("k")).description, "theirs");
});

// ---------------------------------------------------------------------------------------------
// Resources: consumers and the borrowed connection

test("list() is one pass over the stream, not a request per key, and leaves no consumer", async () => {
  await using f = await natsFixture();
  const nc = await f.connect();
  const store = await openJetStreamStore({ bucket: BUCKET, prefix: "run" }, { nc });
  // Count what the store sends on its connection.
  let sent = 0;
  const spied = nc as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of ["request", "publish"]) {
    const original = spied[name]!.bind(nc);
    spied[name] = (...args: unknown[]) => {
      sent++;
      return original(...args);
    };
  }
  assert.deepEqual(await store.list(), []);
  assert.equal(await f.consumers(), 0);
  for (let i = 0; i < 300; i++) await store.create(`k${i}`, `d${i}`, "c");
  sent = 0;
  const items = await store.list();
  assert.equal(items.length, 300);
  assert.deepEqual(items.slice(0, 2), [{ key: "k0", description: "d0" }, {
    key: "k1",
    description: "d1",
  }]);
  // A consumer create, three pulls of at most 128 entries, a consumer delete.
  assert.ok(sent <= 10, `list() sent ${sent} messages for 300 keys`);
  assert.equal(await f.consumers(), 0);
});

test("the borrowed connection is never closed, drained or reconfigured", async () => {
  await using f = await natsFixture();
  const nc = await f.connect();
  const calls: string[] = [];
  const spied = nc as unknown as Record<string, unknown>;
  for (const name of ["close", "drain", "reconnect"]) {
    spied[name] = () => {
      calls.push(name);
      return Promise.resolve();
    };
  }
  const options = JSON.stringify((nc as unknown as { options: unknown }).options);
  const store = await openJetStreamStore({ bucket: BUCKET, prefix: "p" }, { nc });
  const scope = new Scope();
  await store.create("k", "d", "c", { scope });
  await store.read("k", { scope });
  await store.update("k", "d", "c2", { scope });
  await store.list();
  await store.delete("k");
  await failure(store.read("k", { signal: AbortSignal.abort() }));
  assert.deepEqual(calls, []);
  assert.equal(nc.isClosed(), false);
  assert.equal(JSON.stringify((nc as unknown as { options: unknown }).options), options);
});

// ---------------------------------------------------------------------------------------------
// Deadlines and signals

test("every call fails with UnavailableError within its deadline when the server hangs", async () => {
  await using f = await natsFixture();
  const store = await f.open({ timeout: 1_000 });
  const scope = new Scope();
  await store.create("k", "d", "c", { scope });
  await f.server.pause();
  try {
    const calls: Array<[string, () => Promise<unknown>]> = [
      ["list", () => store.list()],
      ["read", () => store.read("k", { scope })],
      ["create", () => store.create("n", "d", "c", { scope })],
      ["update", () => store.update("k", "d", "c2", { scope })],
      ["delete", () => store.delete("k")],
    ];
    for (const [name, call] of calls) {
      const started = Date.now();
      const e = await expectError(call(), UnavailableError, /did not answer within 1000 ms/);
      if (name !== "list" && name !== "read") assert.match(e.message, /may or may not/);
      // An upper bound against hanging, not a speed claim.
      assert.ok(Date.now() - started < 3_000 * 3, `${name} took too long`);
    }
  } finally {
    f.server.resume();
  }
  // The update's publish was sent before the deadline, so the server may apply it once it runs.
  const after = await store.read("k", { scope });
  assert.ok(after.content === "c" || after.content === "c2", after.content);
  await store.update("k", "d", "c3", { scope });
});

test("an abort during a call fails it with UnavailableError without waiting for the deadline", async () => {
  await using f = await natsFixture();
  const store = await f.open({ timeout: 600_000 });
  await store.create("k", "d", "c");
  await f.server.pause();
  try {
    for (
      const call of [
        (signal: AbortSignal) => store.read("k", { signal }),
        (signal: AbortSignal) => store.list({ signal }),
        (signal: AbortSignal) => store.create("n", "d", "c", { signal }),
      ]
    ) {
      const controller = new AbortController();
      const pending = call(controller.signal);
      setTimeout(() => controller.abort(new Error("user gave up")), 50);
      const e = await expectError(pending, UnavailableError, /aborted/);
      assert.equal((e.cause as Error).message, "user gave up");
    }
  } finally {
    f.server.resume();
  }
});

test("a call on a closed connection fails with UnavailableError naming no address", async () => {
  await using f = await natsFixture();
  const nc = await f.connect();
  const store = await openJetStreamStore({ bucket: BUCKET, prefix: "p" }, { nc });
  await nc.close();
  await expectError(store.read("k"), UnavailableError, /connection is closed/);
  await expectError(store.create("k", "d", "c"), UnavailableError);
  await expectError(store.list(), UnavailableError);
});

test("a bucket deleted after opening fails calls with UnavailableError", async () => {
  await using f = await natsFixture();
  const store = await f.open();
  await f.kv.destroy();
  await expectError(store.read("k"), UnavailableError, /no longer exists/);
  await expectError(store.create("k", "d", "c"), UnavailableError, /no longer exists/);
  await expectError(store.list(), UnavailableError);
});
