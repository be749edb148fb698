// The jetstream backend's conformance suite for Node and Bun, against the private nats-server
// whose URL the driver passes in NATS_URL: one fresh bucket per case, one connection per store.

import process from "node:process";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import {
  createJetStreamBucket,
  JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  openJetStreamStore,
} from "../../mod.ts";
import { conformance } from "../conformance.ts";
import { finish } from "./_finish.ts";

const url = process.env.NATS_URL;
if (!url) throw new Error("NATS_URL is not set");
let buckets = 0;

conformance({
  backend: "jetstream",
  enforcesReadBeforeUpdate: true,
  open: async () => {
    const connections: NatsConnection[] = [];
    const open = async () => {
      const nc = await connect({ servers: [url], name: "agentmem-runtime-test" });
      connections.push(nc);
      return nc;
    };
    const bucket = `conformance${++buckets}`;
    const admin = await open();
    await createJetStreamBucket(admin, {
      bucket,
      replicas: 1,
      storage: "file",
      maxValueSize: JETSTREAM_HISTORY_MIN_VALUE_SIZE,
    });
    const kv = await new Kvm(admin).open(bucket);
    const store = (more = {}) =>
      open().then((nc) => openJetStreamStore({ bucket, prefix: "run", ...more }, { nc }));
    return {
      store: await store(),
      peer: store,
      reopen: store,
      plant: async (key: string, bytes: Uint8Array) => void await kv.put(`run.${key}`, bytes),
      cleanup: async () => {
        await kv.destroy();
        for (const stream of [`KVH_${bucket}`, `KVR_${bucket}`]) {
          await (await import("@nats-io/jetstream")).jetstreamManager(admin).then((jsm) =>
            jsm.streams.delete(stream)
          ).catch(() => {});
        }
        await Promise.all(connections.map((nc) => nc.close()));
      },
    };
  },
});

await finish();
