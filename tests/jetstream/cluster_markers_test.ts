// The jetstream backend's capacity bound and delete markers on a replicated bucket: an R3
// bucket on a 3-node nats-server 2.10.27 cluster, written through stores on different nodes. It
// makes delete markers old at once, through the stores' clock (`JetStreamDeps.now`).

import assert from "node:assert/strict";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { Kvm } from "@nats-io/kv";
import { CapacityError, MAX_ENTRIES, openJetStreamStore, Scope, type Store } from "../../mod.ts";
import { natsConnect, retryUntil, startNatsCluster } from "../_lib/nats_server.ts";
import { serverBinary } from "../nemesis/servers.ts";
import { needs } from "../_lib/needs.ts";

const BUCKET = "memory";
const BIN = serverBinary("2.10.27");
// The clock the stores age delete markers by: the machine's, or 31 minutes ahead (a minute more
// than the 30 a marker waits, so one stored as the listing starts counts as old too).
let ahead = 0;
const now = () => Date.now() + ahead;
Deno.test({
  name:
    "[jetstream 2.10.27 cluster] R3 bucket: stores on two nodes creating in turn never pass the limit, and old delete markers are purged",
  ...needs("the R3 capacity test", "nats-server 2.10.27"),
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    assert.ok(BIN, "nats-server 2.10.27 is missing; run .ci/nats-2.10.sh");
    await using cluster = await startNatsCluster(3, BIN);
    const conns: NatsConnection[] = [];
    try {
      for (const url of cluster.urls) conns.push(await natsConnect(url));
      const [n1, n2, n3] = conns as [NatsConnection, NatsConnection, NatsConnection];
      const kv = await retryUntil(
        () => new Kvm(n1).create(BUCKET, { history: 1, replicas: 3 }),
        60_000,
      );
      await retryUntil(() => kv.put("warmup", "ok"), 60_000);
      const open = (nc: NatsConnection) =>
        // History off: the bucket keeps one message per key, whose old markers are purged.
        retryUntil(
          () => openJetStreamStore({ bucket: BUCKET, prefix: "run", history: false }, { nc, now }),
          60_000,
        );
      const [a, b, c] = [await open(n1), await open(n2), await open(n3)] as Store[] as [
        Store,
        Store,
        Store,
      ];

      const fill = async (from: number) => {
        let created = 0;
        for (let i = from;; i++) {
          const outcome = await (i % 2 === 0 ? a : b).create(`k${i}`, "d", "c").then(
            () => "created",
            (e) => e,
          );
          if (outcome instanceof CapacityError) return created;
          if (outcome !== "created") throw outcome;
          created++;
        }
      };
      assert.equal(await fill(0), MAX_ENTRIES);
      assert.equal((await c.list()).length, MAX_ENTRIES);

      // Deletes through a third node keep their markers (a purge right after a delete is not
      // durable across a crash) until they are old; then a listing purges them. The freed room is
      // refilled exactly either way.
      for (let i = 0; i < 100; i++) assert.equal(await c.delete(`k${i}`), true);
      const jsm = await jetstreamManager(n1);
      const subjects = async () =>
        Object.keys(
          (await jsm.streams.info(`KV_${BUCKET}`, { subjects_filter: `$KV.${BUCKET}.run.>` }))
            .state.subjects ?? {},
        ).length;
      assert.equal(await subjects(), MAX_ENTRIES);
      ahead = 31 * 60_000;
      try {
        assert.equal((await c.list()).length, MAX_ENTRIES - 100);
      } finally {
        ahead = 0;
      }
      assert.equal(await subjects(), MAX_ENTRIES - 100);
      assert.equal(await fill(MAX_ENTRIES + 100), 100);
      assert.equal((await a.list()).length, MAX_ENTRIES);

      // The scope namespace names the instance: creation time and raft group.
      const { created, cluster: ci } = await jsm.streams.info(`KV_${BUCKET}`);
      assert.ok(ci?.raft_group, "a clustered stream reports its raft group");
      const scope = new Scope();
      await c.read("k200", { scope });
      assert.deepEqual(Object.keys(scope.snapshot().revisions), [
        `jetstream:${BUCKET}@${created}~${ci.raft_group}/run`,
      ]);
    } finally {
      await Promise.all(conns.map((c) => c.close().catch(() => {})));
    }
  },
});
