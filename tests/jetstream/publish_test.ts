// Writes published through the backend's own reply subscription (backends/jetstream/write.ts,
// replies.ts): each write is one publish with its reply under the connection's inbox prefix, no
// request() of the client's; its answer is read as the client reads one (a refusal keeps its
// meaning); and a subject the server refuses to the user is said to be refused at once, not after
// the call's timeout.

import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import {
  createJetStreamBucket,
  ExistsError,
  history,
  JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  openJetStreamStore,
  Scope,
  StaleError,
  UnavailableError,
} from "../../mod.ts";
import { needsNats, startNatsServer } from "../_lib/nats_server.ts";
import { withInboxUser } from "./_inbox_user.ts";

const BUCKET = {
  bucket: "pub",
  replicas: 1,
  storage: "file",
  maxValueSize: JETSTREAM_HISTORY_MIN_VALUE_SIZE,
} as const;

Deno.test({
  name:
    "each write is one publish with its reply under the connection's inbox prefix, and its refusals keep their meaning",
  ...needsNats(),
  fn: () =>
    withInboxUser(BUCKET, async (nc) => {
      const store = await openJetStreamStore({
        bucket: "pub",
        prefix: "",
        readBeforeUpdate: false,
      }, { nc });
      // What the store sends to the bucket's subjects, and whether it asks through request().
      const writes: { subject: string; reply: string | undefined }[] = [];
      let requests = 0;
      const publish = nc.publish.bind(nc);
      nc.publish = (subject, data, opts) => {
        if (subject.startsWith("$KV.pub.k")) writes.push({ subject, reply: opts?.reply });
        return publish(subject, data, opts);
      };
      const request = nc.request.bind(nc);
      nc.request = (...args) => {
        if (args[0].startsWith("$KV.pub.k")) requests++;
        return request(...args);
      };
      await store.create("k", "about k", "one");
      await store.update("k", "about k", "two");
      await assert.rejects(() => store.create("k", "about k", "again"), ExistsError);
      // A revision-checked update over a revision the key has moved past is stale.
      const checked = await openJetStreamStore({
        bucket: "pub",
        prefix: "",
        readBeforeUpdate: true,
      }, { nc });
      const scope = new Scope({ actor: "test" });
      await checked.read("k", { scope });
      await store.update("k", "about k", "three");
      await assert.rejects(() => checked.update("k", "about k", "four", { scope }), StaleError);
      assert.equal(await store.delete("k"), true);
      assert.equal(await store.delete("k"), false);
      assert.equal((await history(store, "k")).length, 4);
      assert.equal(requests, 0);
      assert.ok(writes.length >= 5, `${writes.length} writes`);
      for (const w of writes) assert.match(w.reply ?? "", /^_INBOX_app\.[^.]+\.\d+$/, w.subject);
    }),
});

Deno.test({
  name:
    "a write to subjects the NATS user may not publish to is refused at once, in words, not after the timeout",
  ...needsNats(),
  async fn() {
    const config = `authorization { users = [
      { user: "admin", password: "pw" },
      { user: "reader", password: "pw", permissions: {
        publish: { allow: [">"], deny: ["$KV.pub.>"] }, subscribe: { allow: ["_INBOX.>"] } } } ] }`;
    await using server = await startNatsServer({ config });
    const admin = await connect({ servers: server.url, user: "admin", pass: "pw" });
    const nc = await connect({ servers: server.url, user: "reader", pass: "pw" });
    try {
      await createJetStreamBucket(admin, BUCKET);
      await (await openJetStreamStore({ bucket: "pub", prefix: "" }, { nc: admin }))
        .create("k", "about k", "body");
      // The reader's store opens and reads; only its writes are refused.
      const store = await openJetStreamStore({
        bucket: "pub",
        prefix: "",
        timeout: 20_000,
        readBeforeUpdate: false,
      }, { nc });
      assert.equal((await store.read("k")).content, "body");
      for (const write of [() => store.update("k", "about k", "x"), () => store.delete("k")]) {
        const t0 = performance.now();
        await assert.rejects(write, (e: Error) => {
          assert.ok(e instanceof UnavailableError, e.message);
          assert.match(e.message, /not permitted/);
          return true;
        });
        assert.ok(performance.now() - t0 < 5_000, `${performance.now() - t0} ms`);
      }
      assert.equal((await store.read("k")).content, "body");
    } finally {
      await nc.close();
      await admin.close();
    }
  },
});
