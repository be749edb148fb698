// The jetstream backend on 3-node nats-server clusters (loopback). Replicated buckets run on
// nats-server 2.10.27 (fetched by .ci/nats-2.10.sh): killing the stream leader loses no
// acknowledged write, and two revision-checked updates from one read never both succeed. On the
// system's 2.9.10 the same race reproduces nats-server issue 4320 (both acknowledged), which is
// why the library refuses a replicated bucket through a server older than 2.9.21.

import assert from "node:assert/strict";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { type KV, Kvm } from "@nats-io/kv";
import {
  ConfigError,
  createJetStreamBucket,
  JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  openJetStreamStore,
  Scope,
  StaleError,
  type Store,
} from "../../mod.ts";
import {
  type NatsCluster,
  natsConnect,
  retryUntil,
  startNatsCluster,
} from "../_lib/nats_server.ts";
import { lostWrites, TIMEOUT_MS, WriteLoad } from "./_load.ts";
import { serverBinary } from "../nemesis/servers.ts";
import { needs, type Tool } from "../_lib/needs.ts";

const BUCKET = "memory";
const STREAM = `KV_${BUCKET}`;
const BATCH = 100;
const TRIALS = 40;
// The 2.9.10 race wins in about a quarter of raw trials here; 100 make a miss vanishingly rare.
const RAW_TRIALS = 100;

// A test on a cluster of `version`. Without the binary: a loud skip, or under CI=true a failure.
function test(version: string, name: string, fn: (bin: string) => Promise<void>): void {
  const bin = serverBinary(version);
  Deno.test({
    name: `[jetstream ${version} cluster] ${name}`,
    ...needs(`the cluster tests on ${version}`, `nats-server ${version}` as Tool),
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      assert.ok(bin, `nats-server ${version} is missing; run .ci/nats-2.10.sh`);
      await fn(bin);
    },
  });
}

async function openStore(nc: NatsConnection, prefix = "run"): Promise<Store> {
  return await openJetStreamStore({ bucket: BUCKET, prefix, timeout: TIMEOUT_MS }, { nc });
}

// A cluster with a bucket of `replicas`, one connection per node (each to that node only).
async function clusterWithBucket(bin: string, replicas: number) {
  const cluster: NatsCluster = await startNatsCluster(3, bin);
  const conns: NatsConnection[] = [];
  try {
    for (const url of cluster.urls) conns.push(await natsConnect(url));
    const admin = conns[0] as NatsConnection;
    // A new cluster elects its JetStream leaders first; a replicated bucket then needs a moment.
    // The bucket `agentmem bucket init` makes: with what history needs (two streams).
    await retryUntil(
      () =>
        createJetStreamBucket(admin, {
          bucket: BUCKET,
          replicas,
          storage: "file",
          maxValueSize: JETSTREAM_HISTORY_MIN_VALUE_SIZE,
        }),
      60_000,
    );
    const kv = await new Kvm(admin).open(BUCKET);
    await retryUntil(() => kv.put("warmup", "ok"), 60_000);
    const close = async () => {
      await Promise.all(conns.map((c) => c.close().catch(() => {})));
      await cluster.stop();
    };
    return { cluster, conns, [Symbol.asyncDispose]: close };
  } catch (e) {
    await Promise.all(conns.map((c) => c.close().catch(() => {})));
    await cluster.stop();
    throw e;
  }
}

// Two raw KV handles on two nodes write `k`, then update it from that revision at once,
// `RAW_TRIALS` times; returns how often both updates were acknowledged.
async function rawDoubleUpdates(conns: NatsConnection[]): Promise<number> {
  const [a, b] = await Promise.all(
    [conns[0], conns[1]].map((c) => new Kvm(c as NatsConnection).open(BUCKET)),
  ) as [KV, KV];
  let both = 0;
  for (let i = 0; i < RAW_TRIALS; i++) {
    const key = `raw${i}`;
    const revision = await retryUntil(() => a.put(key, "0"), 30_000);
    const results = await Promise.allSettled([
      a.update(key, "a", revision),
      b.update(key, "b", revision),
    ]);
    if (results.every((r) => r.status === "fulfilled")) both++;
  }
  return both;
}

test(
  "2.10.27",
  "R3 bucket: killing the stream leader loses no acknowledged write and writes resume",
  async (bin) => {
    await using c = await clusterWithBucket(bin, 3);
    const [nc, verifier] = [
      await natsConnect(c.cluster.urls),
      await natsConnect(c.cluster.urls),
    ];
    try {
      const store = await retryUntil(() => openStore(nc), 60_000);
      const jsm = await jetstreamManager(nc);
      assert.equal((await jsm.streams.info(STREAM)).config.num_replicas, 3);

      const load = new WriteLoad(store);
      await load.reach(BATCH);
      const leader = (await jsm.streams.info(STREAM)).cluster?.leader;
      const victim = c.cluster.servers.find((s) => s.name === leader);
      assert.ok(victim, `no server is named after the stream leader ${leader}`);
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
      const lost = await lostWrites(await openStore(verifier), load.acked);
      console.log(
        `leader kill on 2.10.27: leader ${leader} killed, new leader ${newLeader}; ${load.acked.size} acknowledged creates (${ackedAtKill} before the kill), ${load.failures.length} failed with UnavailableError, ${lost.length} acknowledged writes lost`,
      );
      assert.deepEqual(lost, []);
    } finally {
      await nc.close().catch(() => {});
      await verifier.close().catch(() => {});
    }
  },
);

test(
  "2.10.27",
  `R3 bucket: of two updates from one read on two nodes, exactly one succeeds (raw and through stores)`,
  async (bin) => {
    await using c = await clusterWithBucket(bin, 3);
    const rawBoth = await rawDoubleUpdates(c.conns);
    const [s1, s2] = await Promise.all(
      [c.conns[0], c.conns[1]].map((nc) =>
        retryUntil(() => openStore(nc as NatsConnection), 60_000)
      ),
    ) as [Store, Store];
    let storeBoth = 0, stale = 0;
    for (let i = 0; i < TRIALS; i++) {
      const key = `k${i}`;
      await retryUntil(() => s1.create(key, "race", "0"), 30_000);
      // Both runs read the same revision (retried until both nodes serve it).
      const [x, y] = [new Scope(), new Scope()];
      await s1.read(key, { scope: x });
      await retryUntil(() => s2.read(key, { scope: y }), 30_000);
      const results = await Promise.allSettled([
        s1.update(key, "race", "a", { scope: x }),
        s2.update(key, "race", "b", { scope: y }),
      ]);
      if (results.every((r) => r.status === "fulfilled")) storeBoth++;
      for (const r of results) {
        if (r.status === "rejected") {
          assert.ok(r.reason instanceof StaleError, `unexpected failure: ${r.reason}`);
          stale++;
        }
      }
    }
    console.log(
      `2.10.27 R3: both updates acknowledged in ${rawBoth}/${RAW_TRIALS} raw trials and ${storeBoth}/${TRIALS} store trials (${stale} StaleError)`,
    );
    assert.equal(rawBoth, 0);
    assert.equal(storeBoth, 0);
  },
);

test(
  "2.9.10",
  `R3 bucket: two updates from one read are both acknowledged (nats-server issue 4320), and the library refuses to open it`,
  async (bin) => {
    await using c = await clusterWithBucket(bin, 3);
    const both = await rawDoubleUpdates(c.conns);
    console.log(`2.9.10 R3: both raw updates acknowledged in ${both}/${RAW_TRIALS} trials`);
    // The server bug the refusal exists for: if this ever reads 0, 2.9.10 was fixed or the race
    // was not reproduced, and the trial needs another look.
    assert.ok(both > 0, `both updates were acknowledged in none of ${RAW_TRIALS} trials`);
    const error = await openStore(c.conns[1] as NatsConnection).then(() => undefined, (e) => e);
    assert.ok(error instanceof ConfigError, `opening the R3 bucket on 2.9.10: ${error}`);
    assert.match(error.message, /2\.9\.10/);
    assert.match(error.message, /2\.9\.21/);
    assert.match(error.message, /upgrade/);
  },
);

test(
  "2.9.10",
  "R1 bucket on a 2.9.10 cluster: the library opens it and of two updates from one read exactly one succeeds",
  async (bin) => {
    await using c = await clusterWithBucket(bin, 1);
    const [s1, s2] = await Promise.all(
      [c.conns[0], c.conns[1]].map((nc) =>
        retryUntil(() => openStore(nc as NatsConnection), 60_000)
      ),
    ) as [Store, Store];
    let both = 0;
    for (let i = 0; i < TRIALS; i++) {
      const key = `k${i}`;
      await retryUntil(() => s1.create(key, "race", "0"), 30_000);
      const [x, y] = [new Scope(), new Scope()];
      await s1.read(key, { scope: x });
      await s2.read(key, { scope: y });
      const results = await Promise.allSettled([
        s1.update(key, "race", "a", { scope: x }),
        s2.update(key, "race", "b", { scope: y }),
      ]);
      if (results.every((r) => r.status === "fulfilled")) both++;
    }
    console.log(`2.9.10 R1: both updates acknowledged in ${both}/${TRIALS} trials`);
    assert.equal(both, 0);
  },
);
