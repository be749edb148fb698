// A separate process writing through a jetstream store with history, for the history tests. It
// prints {"t":"ready"} once connected, then one JSON line per acknowledged write.
//
// - "counter": read -> update increments of key "counter" until `count` succeeded (a StaleError
//   means another process won: read again), then {"t":"done"}.
// - "writer": random creates, updates and deletes of keys k0..k7 until killed; each acknowledged
//   write prints {"t":"ack","op","key","content"} after it returned.

import { connect } from "@nats-io/transport-node";
import { ExistsError, NotFoundError, openJetStreamStore, Scope, StaleError } from "../../mod.ts";

export interface HistoryJob {
  readonly servers: string;
  readonly bucket: string;
  readonly mode: "counter" | "writer";
  readonly count?: number;
  readonly seed?: number;
}

const job = JSON.parse(Deno.args[0] ?? "{}") as HistoryJob;
const print = (record: Record<string, unknown>) => console.log(JSON.stringify(record));
const nc = await connect({ servers: job.servers });
const store = await openJetStreamStore({ bucket: job.bucket, prefix: "run" }, { nc });
print({ t: "ready" });

if (job.mode === "counter") {
  let done = 0;
  while (done < (job.count ?? 50)) {
    const scope = new Scope({ run: `counter-${Deno.pid}` });
    const { content } = await store.read("counter", { scope });
    try {
      await store.update("counter", "a shared counter", String(Number(content) + 1), { scope });
      done++;
      print({ t: "ack", op: "update", key: "counter", content: String(Number(content) + 1) });
    } catch (e) {
      if (!(e instanceof StaleError)) throw e;
    }
  }
  print({ t: "done" });
  await nc.close();
} else {
  let seed = job.seed ?? 1;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const scope = new Scope({ run: `writer-${Deno.pid}` });
  for (let i = 0;; i++) {
    const key = `k${Math.floor(random() * 8)}`;
    const content = `${Deno.pid}-${i}`;
    const pick = random();
    try {
      if (pick < 0.4) {
        await store.create(key, `about ${key}`, content, { scope });
        print({ t: "ack", op: "create", key, content });
      } else if (pick < 0.8) {
        await store.read(key, { scope });
        await store.update(key, `about ${key}`, content, { scope });
        print({ t: "ack", op: "update", key, content });
      } else if (await store.delete(key, { scope })) {
        print({ t: "ack", op: "delete", key, content: "" });
      }
    } catch (e) {
      if (!(e instanceof ExistsError || e instanceof NotFoundError || e instanceof StaleError)) {
        throw e;
      }
    }
  }
}
