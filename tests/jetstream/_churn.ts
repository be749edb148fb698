// A separate process that writes to a jetstream bucket until its stdin closes: "others write"
// for the churn tests. It prints {"t":"ready"} once connected and {"t":"done","writes":n} at
// the end (the writes it made, or with "create-delete" the calls that were answered).
//
// - "overwrite": raw puts of random existing keys `<prefix>.k<i>`, 16 in flight.
// - "create-delete": a library store creates and deletes keys of its own, one at a time, so the
//   keyspace stays near its limit while its stream sequence moves on every write.
// - "between": a library store with history creates and deletes keys that sort between the stable
//   keys `s000`, `s001`, ... (`s<nnn>x<pid>`), 4 at once, so listings meet keys that come and go
//   amid the ones that stay, and the deletes' moves purge subjects while listings run.

import { connect } from "@nats-io/transport-node";
import { Kvm } from "@nats-io/kv";
import { CapacityError, openJetStreamStore, serializeEntry } from "../../mod.ts";

export interface ChurnJob {
  readonly servers: string;
  readonly bucket: string;
  readonly prefix: string;
  readonly mode: "overwrite" | "create-delete" | "between";
  readonly keys: number;
}

const job = JSON.parse(Deno.args[0] ?? "{}") as ChurnJob;
const nc = await connect({ servers: job.servers });
let stop = false;
(async () => {
  for await (const _ of Deno.stdin.readable) {
    // Nothing is sent; the stream ends when the test closes it.
  }
  stop = true;
})();
console.log(JSON.stringify({ t: "ready" }));
let writes = 0;
if (job.mode === "overwrite") {
  const kv = await new Kvm(nc).open(job.bucket);
  const bytes = new TextEncoder().encode(serializeEntry("churned", "x".repeat(200)));
  while (!stop) {
    await Promise.all(
      Array.from(
        { length: 16 },
        () => kv.put(`${job.prefix}.k${Math.floor(Math.random() * job.keys)}`, bytes),
      ),
    );
    writes += 16;
  }
} else if (job.mode === "between") {
  const store = await openJetStreamStore({ bucket: job.bucket, prefix: job.prefix }, {
    nc,
    onWarning: () => {},
  });
  const one = async (lane: number) => {
    for (let i = 0; !stop; i++) {
      const key = `s${
        String((i * 7 + lane * 151) % job.keys).padStart(3, "0")
      }x${Deno.pid}-${lane}`;
      await store.create(key, "churned", "x");
      await store.delete(key);
      writes += 2;
    }
  };
  await Promise.all([0, 1, 2, 3].map(one));
} else {
  const store = await openJetStreamStore({ bucket: job.bucket, prefix: job.prefix }, {
    nc,
    onWarning: () => {},
  });
  for (let i = 0; !stop; i++) {
    const key = `churn-${Deno.pid}-${i % job.keys}`;
    try {
      await store.create(key, "churned", "x");
    } catch (e) {
      if (!(e instanceof CapacityError)) throw e;
    }
    await store.delete(key);
    writes += 2;
  }
}
console.log(JSON.stringify({ t: "done", writes }));
await nc.close();
