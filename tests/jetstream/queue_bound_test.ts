// The review queue's limit on jetstream through two handles, each keeping its bound on the
// pending proposals (backends/jetstream/proposals.ts, QueueBound): a handle's bound sees what
// the other added, and a handle that decides moves its bound past its own decision without
// letting the queue pass its limit.

import assert from "node:assert/strict";
import {
  CapacityError,
  createJetStreamBucket,
  JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  MAX_PENDING_PROPOSALS,
  openJetStreamStore,
  proposals,
  rejectProposal,
  Scope,
  type Store,
} from "../../mod.ts";
import { natsConnect, needsNats, startNatsServer } from "../_lib/nats_server.ts";

const full = (e: Error) => {
  assert.ok(e instanceof CapacityError, String(e));
  assert.match(e.message, /the review queue is full \(1024 proposals pending\)/);
  return true;
};

Deno.test({
  name:
    "review queue (jetstream): a held write sees another handle's proposals, and a handle that decides never lets the queue pass its limit",
  ...needsNats(),
  async fn() {
    await using server = await startNatsServer();
    const nc = await natsConnect(server.url);
    try {
      await createJetStreamBucket(nc, {
        bucket: "queue",
        replicas: 1,
        storage: "file",
        maxValueSize: JETSTREAM_HISTORY_MIN_VALUE_SIZE,
      });
      const open = () =>
        openJetStreamStore({ bucket: "queue", prefix: "q", review: "all" }, { nc });
      const [a, b] = [await open(), await open()];
      const run = new Scope({ run: "run-queue" });
      const hold = (store: Store, key: string) => store.create(key, "held", "", { scope: run });
      for (let i = 0; i < MAX_PENDING_PROPOSALS - 2; i++) await hold(a, `a${i}`);
      // The other handle takes the last two places, after the first handle's bound was taken.
      await hold(b, "b0");
      await hold(b, "b1");
      // The first handle decides one: its bound moves past its own claim and decision, counting
      // what the other added meanwhile, so the one place it freed is taken once.
      const [first] = await proposals(a, { limit: 1 });
      await rejectProposal(a, first!.id);
      await hold(a, "a-after");
      await assert.rejects(hold(a, "a-over-again"), full);
      await assert.rejects(hold(b, "b-over"), full);
      await assert.rejects(hold(a, "a-over-third"), full);
      assert.equal((await proposals(a)).length, MAX_PENDING_PROPOSALS);
    } finally {
      await nc.close();
    }
  },
});
