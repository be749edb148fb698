// A separate process whose clock is off by `offsetMs` (Date and Date.now patched before the
// library loads), writing through a jetstream store: a writer with a wrong clock, for the
// history tests. It prints {"t":"done"} after its writes, each an update after a read (or a
// create of a key it finds absent), all under one run.

export interface ClockJob {
  readonly servers: string;
  readonly bucket: string;
  readonly prefix: string;
  readonly offsetMs: number;
  readonly run: string;
  readonly key: string;
  readonly writes: number;
}

const job = JSON.parse(Deno.args[0] ?? "{}") as ClockJob;
const RealDate = Date;
const shifted = () => RealDate.now() + job.offsetMs;
class ShiftedDate extends RealDate {
  constructor(...args: unknown[]) {
    super(...((args.length === 0 ? [shifted()] : args) as [number]));
  }
  static override now(): number {
    return shifted();
  }
}
globalThis.Date = ShiftedDate as DateConstructor;

const { connect } = await import("@nats-io/transport-node");
const { NotFoundError, openJetStreamStore, Scope } = await import("../../mod.ts");
const nc = await connect({ servers: job.servers });
const store = await openJetStreamStore({ bucket: job.bucket, prefix: job.prefix }, { nc });
const scope = new Scope({ run: job.run });
for (let i = 0; i < job.writes; i++) {
  const content = `${job.run} ${i}`;
  const found = await store.read(job.key, { scope }).catch((e) => {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  });
  if (found === undefined) await store.create(job.key, `about ${job.key}`, content, { scope });
  else await store.update(job.key, `about ${job.key}`, content, { scope });
}
console.log(JSON.stringify({ t: "done" }));
await nc.close();
