// One separate Deno process with its own NATS connection and its own jetstream store, driven by
// tests/jetstream_process_test.ts. It prints JSON lines: {"t":"ready"} once it is listening for
// the go signal, then one record per phase. Between phases it waits for the next go message on
// the job's control subject, so every process starts each phase at the same moment.

import { connect } from "@nats-io/transport-node";
import { ExistsError, openJetStreamStore, Scope, StaleError } from "../../mod.ts";

/** What a worker does. */
export type Job =
  & { readonly servers: string; readonly bucket: string; readonly control: string }
  & (
    | { readonly mode: "counter"; readonly increments: number }
    | { readonly mode: "contend"; readonly keys: number }
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
} else {
  const keys = Array.from({ length: job.keys }, (_, i) => `key${i}`);
  await nextPhase();
  // Every key at once, so the processes' requests interleave at the server.
  const created = await Promise.all(keys.map(async (key) => {
    try {
      await store.create(key, `created by ${Deno.pid}`, String(Deno.pid));
      return key;
    } catch (e) {
      if (!(e instanceof ExistsError)) throw e;
      return undefined;
    }
  }));
  print({ t: "created", keys: created.filter((k) => k !== undefined) });
  await nextPhase();
  const deleted = await Promise.all(
    keys.map(async (key) => (await store.delete(key)) ? key : undefined),
  );
  print({ t: "deleted", keys: deleted.filter((k) => k !== undefined) });
}

go.unsubscribe();
await nc.close();
