// One operator of the cross-process review test: opens the store (file or jetstream) as another
// process would, waits for a start time shared with the other operators, then approves or rejects
// every proposal named, printing one JSON line per proposal with what happened to its call.
//
// deno run ... _decide_worker.ts '<job json>'

import { connect } from "@nats-io/transport-node";
import {
  approveProposal,
  MemoryError,
  openFileStore,
  openJetStreamStore,
  rejectProposal,
  Scope,
  type Store,
} from "../../mod.ts";

export interface DecideJob {
  readonly store: { readonly dir: string } | { readonly servers: string; readonly bucket: string };
  readonly decide: "approve" | "reject";
  readonly ids: readonly string[];
  readonly startAt: number;
  readonly actor: string;
}

const job = JSON.parse(Deno.args[0] ?? "{}") as DecideJob;
const print = (record: Record<string, unknown>) => console.log(JSON.stringify(record));
let close = () => Promise.resolve();
let store: Store;
if ("dir" in job.store) store = await openFileStore({ dir: job.store.dir });
else {
  const nc = await connect({ servers: job.store.servers });
  close = () => nc.close();
  store = await openJetStreamStore({ bucket: job.store.bucket, prefix: "run" }, { nc });
}
print({ t: "ready" });
while (Date.now() < job.startAt) await new Promise((r) => setTimeout(r, 1));
const scope = new Scope({ actor: job.actor });
await Promise.all(job.ids.map(async (id) => {
  try {
    const done = job.decide === "approve"
      ? await approveProposal(store, id, { scope })
      : await rejectProposal(store, id, { scope, reason: `by ${job.actor}` });
    print({ t: "decided", id, outcome: done.decision?.outcome, revision: done.decision?.revision });
  } catch (e) {
    print({ t: "refused", id, code: e instanceof MemoryError ? e.code : String(e) });
  }
}));
print({ t: "done" });
await close();
