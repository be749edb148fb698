// The jetstream backend under server faults: a nats-server SIGKILLed and restarted mid-run, and
// the stream leader of an R3 bucket killed on a 3-node cluster. Calls during an outage fail with
// UnavailableError within their deadline; no acknowledged write is lost.

import assert from "node:assert/strict";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { Kvm } from "@nats-io/kv";
import { openJetStreamStore, Scope, type Store, UnavailableError } from "../mod.ts";
import {
  natsConnect,
  needsNats,
  retryUntil,
  startNatsCluster,
  startNatsServer,
} from "./_nats_server.ts";

const BUCKET = "memory";
const STREAM = `KV_${BUCKET}`;
const TIMEOUT_MS = 2_000;
const WRITERS = 4;
const BATCH = 100;

function test(name: string, fn: () => Promise<void>): void {
  Deno.test({
    name: `[jetstream] ${name}`,
    ...needsNats(),
    sanitizeOps: false,
    sanitizeResources: false,
    fn,
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Writers that create new keys as fast as the store lets them, recording which creates were
 * acknowledged and how every failure looked. They pause briefly after a failure.
 */
class WriteLoad {
  /** Acknowledged creates: key → the content written. */
  readonly acked = new Map<string, string>();
  /** When each create was issued and acknowledged. */
  readonly ackTimes: Array<{ issued: number; acked: number }> = [];
  /** Failed calls: the error and how long the call took. */
  readonly failures: Array<{ error: unknown; ms: number }> = [];
  #stopped = false;
  readonly #running: Promise<void[]>;

  constructor(store: Store) {
    let n = 0;
    const writer = async (w: number) => {
      while (!this.#stopped) {
        const key = `w${w}-${n++}`;
        const issued = Date.now();
        try {
          await store.create(key, "written under faults", `content of ${key}`);
          this.acked.set(key, `content of ${key}`);
          this.ackTimes.push({ issued, acked: Date.now() });
        } catch (error) {
          this.failures.push({ error, ms: Date.now() - issued });
          await sleep(100);
        }
      }
    };
    this.#running = Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
  }

  /** Resolves once `count` creates have been acknowledged in all. */
  async reach(count: number, ms = 120_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.acked.size < count) {
      if (Date.now() > deadline) {
        throw new Error(`only ${this.acked.size} of ${count} writes were acknowledged`);
      }
      await sleep(20);
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#running;
  }

  /** Asserts every failure was an UnavailableError that came within 3 deadlines. */
  checkFailures(): void {
    for (const { error, ms } of this.failures) {
      assert.ok(error instanceof UnavailableError, `unexpected failure: ${error}`);
      assert.doesNotMatch(error.message, /nats:\/\/|127\.0\.0\.1/);
      assert.ok(ms < 3 * TIMEOUT_MS, `a failure took ${ms} ms, over 3 deadlines`);
    }
  }
}

// Retries a call the backend reports as unavailable (a cluster still electing, say).
function settled<T>(call: () => Promise<T>): Promise<T> {
  return retryUntil(
    async () => {
      try {
        return { value: await call() };
      } catch (e) {
        if (e instanceof UnavailableError) throw e;
        return { error: e };
      }
    },
    60_000,
    0,
  ).then((r) => {
    if ("error" in r) throw r.error;
    return r.value;
  });
}

// Reads every acknowledged key back through a fresh store; returns the keys that are missing or
// hold something else.
async function lostWrites(store: Store, acked: Map<string, string>): Promise<string[]> {
  const lost: string[] = [];
  for (const [key, content] of acked) {
    const entry = await settled(() => store.read(key)).catch(() => undefined);
    if (entry?.content !== content) lost.push(key);
  }
  const listed = new Set((await settled(() => store.list())).map((item) => item.key));
  for (const key of acked.keys()) if (!listed.has(key) && !lost.includes(key)) lost.push(key);
  return lost;
}

async function openStore(nc: NatsConnection): Promise<Store> {
  return await openJetStreamStore({ bucket: BUCKET, prefix: "run", timeout: TIMEOUT_MS }, { nc });
}

test("nats-server SIGKILLed and restarted mid-run: calls fail with UnavailableError, no acknowledged write is lost", async () => {
  await using server = await startNatsServer();
  const nc = await natsConnect(server.url);
  const verifier = await natsConnect(server.url);
  try {
    await new Kvm(nc).create(BUCKET, { history: 1 });
    const store = await openStore(nc);
    const scope = new Scope();
    await store.create("probe", "read while down", "probe", { scope });

    const load = new WriteLoad(store);
    await load.reach(BATCH);
    await server.kill("SIGKILL");
    const ackedAtKill = load.acked.size;

    // While the server is down, every kind of call fails within its deadline.
    const calls: Array<[string, () => Promise<unknown>]> = [
      ["read", () => store.read("probe", { scope })],
      ["list", () => store.list()],
      ["create", () => store.create("down", "d", "c")],
      ["update", () => store.update("probe", "d", "c", { scope })],
      ["delete", () => store.delete("down")],
    ];
    for (const [name, call] of calls) {
      const started = Date.now();
      const error = await call().then(() => undefined, (e) => e);
      const ms = Date.now() - started;
      assert.ok(error instanceof UnavailableError, `${name} while down: ${error}`);
      assert.ok(ms < 3 * TIMEOUT_MS, `${name} took ${ms} ms while the server was down`);
    }

    await server.restart();
    await load.reach(ackedAtKill + BATCH);
    await load.stop();
    load.checkFailures();

    const lost = await lostWrites(await openStore(verifier), load.acked);
    const slowest = Math.max(0, ...load.failures.map((f) => f.ms));
    console.log(
      `SIGKILL/restart: ${load.acked.size} acknowledged creates (${ackedAtKill} before the kill), ${load.failures.length} failed with UnavailableError (slowest ${slowest} ms, deadline ${TIMEOUT_MS} ms), ${lost.length} acknowledged writes lost`,
    );
    assert.deepEqual(lost, []);
  } finally {
    await nc.close().catch(() => {});
    await verifier.close().catch(() => {});
  }
});

test("R3 bucket on a 3-node cluster: killing the stream leader loses no acknowledged write and writes resume", async () => {
  await using cluster = await startNatsCluster(3);
  const nc = await natsConnect(cluster.urls);
  const verifier = await natsConnect(cluster.urls);
  try {
    // A new cluster elects its JetStream leaders first; an R3 bucket then needs a moment.
    await retryUntil(() => new Kvm(nc).create(BUCKET, { history: 1, replicas: 3 }), 60_000);
    const store = await retryUntil(() => openStore(nc), 60_000);
    await retryUntil(() => store.create("warmup", "first write", "ok"), 60_000);
    const jsm = await jetstreamManager(nc);
    assert.equal((await jsm.streams.info(STREAM)).config.num_replicas, 3);

    const load = new WriteLoad(store);
    await load.reach(BATCH);
    const leader = (await jsm.streams.info(STREAM)).cluster?.leader;
    const victim = cluster.servers.find((s) => s.name === leader);
    assert.ok(victim, `no server is named after the stream leader ${leader}`);
    const killedAt = Date.now();
    const ackedAtKill = load.acked.size;
    await victim.kill("SIGKILL");

    await load.reach(ackedAtKill + BATCH);
    await load.stop();
    load.checkFailures();
    const newLeader = await retryUntil(async () => {
      const now = (await jsm.streams.info(STREAM)).cluster?.leader;
      if (now === undefined || now === leader) throw new Error("no new leader yet");
      return now;
    });
    const firstAfter = Math.min(
      ...load.ackTimes.filter((t) => t.issued > killedAt).map((t) => t.acked),
    );

    const lost = await lostWrites(await openStore(verifier), load.acked);
    console.log(
      `leader kill: leader ${leader} killed, new leader ${newLeader}; first write issued after the kill acknowledged ${
        firstAfter - killedAt
      } ms after it; ${load.acked.size} acknowledged creates (${ackedAtKill} before the kill), ${load.failures.length} failed with UnavailableError, ${lost.length} acknowledged writes lost`,
    );
    assert.deepEqual(lost, []);
  } finally {
    await nc.close().catch(() => {});
    await verifier.close().catch(() => {});
  }
});
