// The jetstream backend under server faults: a nats-server SIGKILLed and restarted mid-run.
// Calls during an outage fail with UnavailableError within their deadline; no acknowledged write
// is lost. Cluster faults (an R3 leader kill, partitions) are in cluster_test.ts and
// tests/nemesis/nemesis_test.ts, on nats-server 2.10.27.

import assert from "node:assert/strict";
import type { NatsConnection } from "@nats-io/nats-core";
import {
  createJetStreamBucket,
  JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  openJetStreamStore,
  Scope,
  type Store,
  UnavailableError,
} from "../../mod.ts";
import { natsConnect, startNatsServer } from "../_lib/nats_server.ts";
import { jetstreamTest } from "../_lib/jetstream_fixture.ts";
import { lostWrites, TIMEOUT_MS, WriteLoad } from "./_load.ts";

const BUCKET = "memory";
const BATCH = 100;

const test = jetstreamTest;

async function openStore(nc: NatsConnection): Promise<Store> {
  return await openJetStreamStore({ bucket: BUCKET, prefix: "run", timeout: TIMEOUT_MS }, { nc });
}

test("nats-server SIGKILLed and restarted mid-run: calls fail with UnavailableError, no acknowledged write is lost", async () => {
  await using server = await startNatsServer();
  const nc = await natsConnect(server.url);
  const verifier = await natsConnect(server.url);
  try {
    await createJetStreamBucket(nc, {
      bucket: BUCKET,
      replicas: 1,
      storage: "file",
      maxValueSize: JETSTREAM_HISTORY_MIN_VALUE_SIZE,
    });
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
