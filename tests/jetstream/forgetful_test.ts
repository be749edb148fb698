// A listing whose consumer forgot what it found is read again (issue 27): on nats-server 2.9 a
// purge that empties a subject while a last-per-subject consumer is being made can leave it past
// the end without its list of each subject's last message, so it delivers only what is written
// after (listings of 600 live keys came back empty under churn). The server does that by a race;
// here a connection that rewrites the consumer's creation does it every time, with what such a
// consumer shows: one new message pending, a start right before it. When the check cannot prove
// it (the oldest key's subject written as the consumer was made), the read is made again too,
// and the third such read in a row is taken.

import assert from "node:assert/strict";
import type { NatsConnection, RequestOptions } from "@nats-io/nats-core";
import { openJetStreamStore, serializeEntry } from "../../mod.ts";
import { BUCKET, jetstreamTest as test, natsFixture } from "../_lib/jetstream_fixture.ts";
import { pageAll } from "./_paging.ts";

const DECODER = new TextDecoder();
const ENCODER = new TextEncoder();

/**
 * `nc`, except that the next `times` last-per-subject consumers made through it once
 * `arm(times)` was called are made as forgetful ones: `side` writes a key first, and the consumer
 * starts at that message.
 */
function forgetful(
  nc: NatsConnection,
  side: () => Promise<number>,
): { nc: NatsConnection; arm: (times?: number) => void; made: () => number } {
  let made = 0;
  let armed = 0;
  const request = async (subject: string, payload?: Uint8Array, opts?: RequestOptions) => {
    if (subject.startsWith("$JS.API.CONSUMER.CREATE.") && payload !== undefined && armed > 0) {
      const body = JSON.parse(DECODER.decode(payload));
      if (body.config?.deliver_policy === "last_per_subject") {
        armed--;
        made++;
        const seq = await side();
        body.config = { ...body.config, deliver_policy: "by_start_sequence", opt_start_seq: seq };
        return nc.request(subject, ENCODER.encode(JSON.stringify(body)), opts);
      }
    }
    return nc.request(subject, payload, opts);
  };
  const proxy = new Proxy(nc, {
    get: (target, p) => {
      if (p === "request") return request;
      const v = Reflect.get(target, p, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { nc: proxy, arm: (times = 1) => void (armed = times), made: () => made };
}

async function plant(f: Awaited<ReturnType<typeof natsFixture>>, keys: string[]) {
  const writer = await f.open();
  for (let i = 0; i < keys.length; i += 50) {
    await Promise.all(keys.slice(i, i + 50).map((k) => writer.create(k, "stays", "x")));
  }
}

test("a list() and memory_list pages whose consumer forgot every key it found read again and see every key", async () => {
  await using f = await natsFixture();
  const stable = Array.from({ length: 300 }, (_, i) => `s${String(i).padStart(3, "0")}`);
  await plant(f, stable);
  const bytes = ENCODER.encode(serializeEntry("written while the listing began", "x"));
  let n = 0;
  const side = async () => await f.kv.put(`run.side-${n++}`, bytes);
  const conn = forgetful(await f.connect(), side);
  const store = await openJetStreamStore({ bucket: BUCKET, prefix: "run" }, { nc: conn.nc });
  for (let i = 0; i < 3; i++) {
    conn.arm();
    const keys = (await store.list()).map((item) => item.key);
    assert.deepEqual(
      stable.filter((k) => !keys.includes(k)),
      [],
      `stable keys listing ${i} missed`,
    );
  }
  // Paging as a model does, every page's listing made through a forgetful consumer first.
  const { seen, pages } = await pageAll(store, { beforePage: () => conn.arm() });
  assert.deepEqual(stable.filter((k) => !seen.has(k)), [], "stable keys paging missed");
  assert.ok(pages > 1, "the listing fit one page");
  assert.equal(conn.made(), 3 + pages, "the connection made too few forgetful consumers");
});

test("a forgetful consumer the check cannot prove forgetful (the oldest key rewritten as it was made) is read again; the third such read in a row is taken", async () => {
  await using f = await natsFixture();
  const stable = Array.from({ length: 40 }, (_, i) => `s${String(i).padStart(3, "0")}`);
  await plant(f, stable);
  const bytes = ENCODER.encode(serializeEntry("written while the listing began", "x"));
  // The oldest message under the prefix is s000's create: its subject is written again first.
  const side = async () => {
    await f.kv.put("run.s000", bytes);
    return await f.kv.put("run.side", bytes);
  };
  const conn = forgetful(await f.connect(), side);
  const store = await openJetStreamStore({ bucket: BUCKET, prefix: "run" }, { nc: conn.nc });
  conn.arm();
  const keys = (await store.list()).map((item) => item.key);
  assert.deepEqual(stable.filter((k) => !keys.includes(k)), [], "stable keys the listing missed");
  assert.equal(conn.made(), 1);
  // Reads that can never tell are not made forever: the third answers, as it read.
  conn.arm(5);
  const taken = (await store.list()).map((item) => item.key);
  assert.equal(conn.made(), 4, "reads made before one was taken");
  assert.deepEqual(taken, ["side"]);
});
