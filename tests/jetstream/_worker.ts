// One separate Deno process with its own NATS connection and its own jetstream store, driven by
// tests/jetstream/process_test.ts. It prints JSON lines: {"t":"ready"} once it is listening for
// the go signal, then one record per phase or round. Before each it waits for the next go
// message on the job's control subject, so every process starts it at the same moment.

import { connect } from "@nats-io/transport-node";
import { CapacityError, ExistsError, openJetStreamStore, Scope, StaleError } from "../../mod.ts";

/** What a worker does. */
export type Job =
  & { readonly servers: string; readonly bucket: string; readonly control: string }
  & (
    | { readonly mode: "counter"; readonly increments: number }
    | { readonly mode: "contend"; readonly keys: number }
    | { readonly mode: "fill" }
  );

const job = JSON.parse(Deno.args[0] ?? "{}") as Job;
const print = (record: Record<string, unknown>) => console.log(JSON.stringify(record));

const nc = await connect({ servers: job.servers, name: `agentmem-worker-${Deno.pid}` });
const store = await openJetStreamStore({ bucket: job.bucket, prefix: "shared" }, { nc });
const go = nc.subscribe(job.control);
const signals = go[Symbol.asyncIterator]();
await nc.flush();
print({ t: "ready", pid: Deno.pid });

async function nextPhase(): Promise<void> {
  const next = await signals.next();
  if (next.done) throw new Error("the control subscription ended");
}

if (job.mode === "counter") {
  await nextPhase();
  // Read, add one, write at the revision read; on StaleError someone else won: read again.
  let done = 0;
  let stale = 0;
  while (done < job.increments) {
    const scope = new Scope();
    const { content } = await store.read("counter", { scope });
    try {
      await store.update("counter", "a shared counter", String(Number(content) + 1), { scope });
      done++;
    } catch (e) {
      if (!(e instanceof StaleError)) throw e;
      stale++;
    }
  }
  print({ t: "counted", done, stale });
} else if (job.mode === "fill") {
  // Create keys of its own until the store says it is full.
  await nextPhase();
  let created = 0;
  for (;; created++) {
    try {
      await store.create(`w${Deno.pid}-${created}`, "filler", "x");
    } catch (e) {
      if (!(e instanceof CapacityError)) throw e;
      break;
    }
  }
  print({ t: "filled", created });
} else {
  // One round per key and phase: every process waits for the go signal, then all of them
  // create (or delete) that one key at the same moment.
  for (let i = 0; i < job.keys; i++) {
    await nextPhase();
    let won = true;
    try {
      await store.create(`key${i}`, `created by ${Deno.pid}`, String(Deno.pid));
    } catch (e) {
      if (!(e instanceof ExistsError)) throw e;
      won = false;
    }
    print({ t: "created", key: `key${i}`, won });
  }
  for (let i = 0; i < job.keys; i++) {
    await nextPhase();
    print({ t: "deleted", key: `key${i}`, won: await store.delete(`key${i}`) });
  }
}

go.unsubscribe();
await nc.close();
