// Requests through a connection's reply subscription (backends/jetstream/replies.ts) share one
// timer: requests sent together set it once, each is lost no sooner than its own time and in the
// order of their times, and an answered one is answered, not lost.

import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import { repliesOf } from "../../backends/jetstream/testing.ts";
import { needsNats, startNatsServer } from "../_lib/nats_server.ts";

Deno.test({
  name:
    "requests sent together set one timer; each is lost at its own time, the answered one answered",
  ...needsNats(),
  async fn() {
    await using server = await startNatsServer();
    const nc = await connect({ servers: server.url });
    try {
      // A subscriber that answers only "answer" and keeps silent on "silent".
      nc.subscribe("test.*", {
        callback: (_e, m) => {
          if (m.subject === "test.answer") m.respond("yes");
        },
      });
      await nc.flush();
      const replies = repliesOf(nc);
      const on = {
        read: (m: { string(): string }) => m.string(),
        lost: (l: { why: string }) => `lost (${l.why})`,
      };
      const ask = (subject: string, ms: number) => {
        const t0 = performance.now();
        return replies.send({ subject, payload: "", ms }, on)!.then((v) => ({
          v,
          ms: performance.now() - t0,
        }));
      };
      // A first request, answered, so the subscription exists before the timers are counted.
      assert.equal((await ask("test.answer", 1_000)).v, "yes");
      // The 400 ms request sets the timer; the 200 ms one sets it earlier; the answered one not.
      const [timers, sent] = countingTimers(() =>
        [ask("test.silent", 400), ask("test.silent", 200), ask("test.answer", 300)] as const
      );
      assert.equal(timers, 2);
      const [late, early, answered] = await Promise.all(sent);
      assert.equal(answered.v, "yes");
      assert.equal(early.v, "lost (timeout)");
      assert.equal(late.v, "lost (timeout)");
      assert.ok(early.ms >= 200 && early.ms < 400, `${early.ms}`);
      assert.ok(late.ms >= 400, `${late.ms}`);
      // Sent together with the same time: one timer.
      const [again, both] = countingTimers(() => [
        ask("test.answer", 1_000),
        ask("test.answer", 1_000),
      ]);
      assert.equal(again, 1);
      assert.deepEqual((await Promise.all(both)).map((a) => a.v), ["yes", "yes"]);
    } finally {
      await nc.close();
    }
  },
});

// How many timers `fn` sets, and what it returns.
function countingTimers<T>(fn: () => T): [number, T] {
  let timers = 0;
  const setTimer = globalThis.setTimeout;
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    timers++;
    return setTimer(...args);
  }) as typeof setTimeout;
  try {
    const out = fn();
    return [timers, out];
  } finally {
    globalThis.setTimeout = setTimer;
  }
}
