// Direct gets and stream infos through the backend's own reply subscription
// (backends/jetstream/direct.ts): the same answers as the client's API, the connection's own inbox
// prefix, and what it cannot answer asked again rather than guessed.

import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import { headers, MsgHdrsImpl, type NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import {
  createJetStreamBucket,
  JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  openJetStreamStore,
} from "../../mod.ts";
import {
  apiCode,
  ASK_AGAIN,
  directGets,
  getMessage,
  type HeaderView,
  lookMessage,
  type MessageSource,
  purge,
  streamInfo,
} from "../../backends/jetstream/testing.ts";
import { needsNats, startNatsServer } from "../_lib/nats_server.ts";
import { withInboxUser } from "./_inbox_user.ts";

const STREAM = "KV_direct";
const BUCKET = {
  bucket: "direct",
  replicas: 1,
  storage: "file",
  maxValueSize: JETSTREAM_HISTORY_MIN_VALUE_SIZE,
} as const;

async function sources(nc: NatsConnection): Promise<{ direct: MessageSource; api: MessageSource }> {
  const jsm = await jetstreamManager(nc);
  const gets = directGets(nc);
  return {
    direct: { jsm, direct: { streams: new Set([STREAM]), gets, ms: 1_000 } },
    api: { jsm, direct: { streams: new Set(), gets, ms: 1_000 } },
  };
}

// A private server with the test's bucket, and a connection to it, for `fn`.
async function onBucket(fn: (nc: NatsConnection) => Promise<void>): Promise<void> {
  await using server = await startNatsServer();
  const nc = await connect({ servers: server.url });
  try {
    await createJetStreamBucket(nc, BUCKET);
    await fn(nc);
  } finally {
    await nc.close();
  }
}

Deno.test({
  name:
    "direct gets answer every query as the stream API does (message, headers, time, none), stream infos as its info, purges as its purge",
  ...needsNats(),
  async fn() {
    await onBucket(async (nc) => {
      const jsm = await jetstreamManager(nc);
      const js = jsm.jetstream();
      for (let i = 0; i < 3; i++) {
        const h = headers();
        h.set("X-Mark", `m${i}`);
        await js.publish(`$KV.direct.k${i % 2}`, `body ${i}`, { headers: h });
      }
      const { direct, api } = await sources(nc);
      const queries = [
        { last_by_subj: "$KV.direct.k0" },
        { last_by_subj: "$KV.direct.k1" },
        { last_by_subj: "$KV.direct.none" },
        { seq: 2 },
        { seq: 9 },
        { seq: 1, next_by_subj: "$KV.direct.k1" },
        { seq: 3, next_by_subj: "$KV.direct.k1" },
      ];
      for (const q of queries) {
        const [a, b] = await Promise.all([
          getMessage(direct, { stream: STREAM, ...q }),
          getMessage(api, { stream: STREAM, ...q }),
        ]);
        const shown = (m: typeof a) =>
          m === null ? null : {
            subject: m.subject,
            seq: m.seq,
            data: new TextDecoder().decode(m.data),
            at: m.at,
            mark: m.header?.get("X-Mark"),
          };
        assert.deepEqual(shown(a), shown(b), JSON.stringify(q));
      }
      // A stream's info, as the client's API gives it; a missing stream's, the API's own error.
      const [info, client] = await Promise.all([
        streamInfo({ nc, jsm }, STREAM),
        jsm.streams.info(STREAM),
      ]);
      assert.deepEqual(
        [info.created, info.state.last_seq, info.state.messages, info.state.num_subjects],
        [client.created, client.state.last_seq, client.state.messages, client.state.num_subjects],
      );
      assert.equal(await directGets(nc).info("KV_gone", 1_000), ASK_AGAIN);
      await assert.rejects(
        () => streamInfo({ nc, jsm }, "KV_gone"),
        (e: Error) => e.name === "StreamNotFoundError",
      );
      // A stream nothing answers for is not guessed at: the caller asks the stream API instead.
      const t0 = performance.now();
      assert.equal(
        await directGets(nc).get("KV_gone", { last_by_subj: "$KV.gone.k" }, 300),
        ASK_AGAIN,
      );
      assert.ok(performance.now() - t0 < 2_000);
      // After the anchor (1): k0 at 2 and 4, k1 at 3. Below 4 on k0, then all of k1.
      await purge({ nc, jsm }, { stream: STREAM, filter: "$KV.direct.k0", seq: 4, ms: 2_000 });
      await purge({ nc, jsm }, { stream: STREAM, filter: "$KV.direct.k1", ms: 2_000 });
      const left = await jsm.streams.info(STREAM, { subjects_filter: "$KV.direct.*" });
      assert.deepEqual(left.state.subjects, { "$KV.direct.k0": 1, "$KV.direct.~agentmem": 1 });
      assert.equal((await jsm.streams.getMessage(STREAM, { seq: 4 }))?.string(), "body 2");
      await assert.rejects(
        () => purge({ nc, jsm }, { stream: "KV_gone", filter: "$KV.gone.k", ms: 2_000 }),
        (e: Error) => apiCode(e) === 10059,
      );
    });
  },
});

Deno.test({
  name:
    "a look answers as a direct get does (sequence, marker, version record, every header), reading the headers from their bytes",
  ...needsNats(),
  async fn() {
    await onBucket(async (nc) => {
      const store = await openJetStreamStore({ bucket: "direct", prefix: "" }, { nc });
      await store.create("v", "about v", "a version");
      await store.create("gone", "about gone", "deleted next");
      await store.delete("gone");
      const js = (await jetstreamManager(nc)).jetstream();
      const h = headers();
      h.append("X-Mark", "first");
      h.append("X-Mark", "second");
      await js.publish("$KV.direct.raw", "a raw put", { headers: h });
      await js.publish("$KV.direct.bare", "no headers of its own");
      const { direct, api } = await sources(nc);
      for (const key of ["v", "gone", "raw", "bare", "none"]) {
        const q = { stream: STREAM, last_by_subj: `$KV.direct.${key}` };
        const [look, asked, got] = await Promise.all([
          lookMessage(direct, q),
          lookMessage(api, q),
          getMessage(api, q),
        ]);
        assert.equal(look === null, got === null, key);
        assert.equal(asked === null, got === null, key);
        if (look === null || asked === null || got === null) continue;
        assert.equal(look.seq, got.seq, key);
        // Where direct gets cannot tell, a look asks the stream API, as a get does.
        assert.equal(asked.seq, got.seq, key);
        assert.equal(asked.header?.get("KV-Operation"), got.header?.get("KV-Operation"), key);
        // Read from the answer's bytes, not decoded by the client.
        assert.ok(look.header !== undefined && !(look.header instanceof MsgHdrsImpl), key);
        const names = [...got.header!.keys(), "KV-Operation", "Agentmem-Op", "Missing"];
        for (const name of names) {
          const each = (x: HeaderView) => [x.get(name), x.last(name), x.has(name)];
          assert.deepEqual(each(look.header), each(got.header!), `${key}: ${name}`);
        }
      }
    });
  },
});

Deno.test({
  name:
    "direct gets reply to the connection's own inbox prefix, so a user allowed only that one reads with them",
  ...needsNats(),
  fn: () =>
    withInboxUser(BUCKET, async (nc) => {
      const store = await openJetStreamStore({ bucket: "direct", prefix: "" }, { nc });
      await store.create("k", "about k", "body");
      // Every read request the store sends, by subject.
      const sent: string[] = [];
      const publish = nc.publish.bind(nc);
      nc.publish = (subject, ...rest) => {
        sent.push(subject);
        return publish(subject, ...rest);
      };
      for (let i = 0; i < 3; i++) assert.equal((await store.read("k")).content, "body");
      assert.deepEqual(sent, Array(3).fill(`$JS.API.DIRECT.GET.${STREAM}.$KV.direct.k`));
    }),
});

Deno.test({
  name: "direct gets survive a reconnect: after the server restarts, reads still use them",
  ...needsNats(),
  async fn() {
    await using server = await startNatsServer();
    const nc = await connect({
      servers: server.url,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 100,
    });
    try {
      await createJetStreamBucket(nc, BUCKET);
      const store = await openJetStreamStore({ bucket: "direct", prefix: "" }, { nc });
      await store.create("k", "about k", "body");
      assert.equal((await store.read("k")).content, "body");
      const sent: string[] = [];
      const publish = nc.publish.bind(nc);
      nc.publish = (subject, ...rest) => {
        if (subject.startsWith("$JS.API.")) sent.push(subject);
        return publish(subject, ...rest);
      };
      await server.kill("SIGKILL");
      await server.restart();
      // Reads during the reconnect may fail; once it is back, each is one direct get.
      for (let i = 0; i < 100; i++) {
        const ok = await store.read("k").then(() => true, () => false);
        if (ok) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      sent.length = 0;
      for (let i = 0; i < 3; i++) assert.equal((await store.read("k")).content, "body");
      assert.deepEqual(sent, Array(3).fill(`$JS.API.DIRECT.GET.${STREAM}.$KV.direct.k`));
    } finally {
      await nc.close();
    }
  },
});
