// A client process of the nemesis run: connects to one node, runs the workloads through the
// library until its stdin closes (or its time is up), and writes its history as JSON lines.
//
//   deno run --allow-all tests/nemesis/worker.ts '<json WorkerArgs>'

import { openJetStreamStore } from "../../mod.ts";
import { natsConnect } from "../_lib/nats_server.ts";
import { HistoryWriter } from "./history.ts";
import { openRawStore } from "./raw_store.ts";
import { Rng } from "../_lib/rng.ts";
import { Client } from "./workloads.ts";

/** What the controller tells a client process. */
export interface WorkerArgs {
  readonly p: number;
  readonly node: number;
  /** The one node this client talks to. */
  readonly url: string;
  readonly bucket: string;
  readonly seed: number;
  /** The store's per-call deadline in milliseconds. */
  readonly timeout: number;
  /** After how many milliseconds an unanswered call is recorded as hung. */
  readonly hangMs: number;
  /** The JSON-lines history file. */
  readonly history: string;
  /** The longest this process runs, whatever happens to its stdin. */
  readonly maxMs: number;
  /** Raw kv calls instead of the library (where the library refuses the bucket). */
  readonly raw?: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(args: WorkerArgs): Promise<void> {
  const started = Date.now();
  let stopped = false;
  // The controller closes our stdin to stop us.
  (async () => {
    for await (const _ of Deno.stdin.readable) {
      // nothing is sent; only the end matters
    }
    stopped = true;
  })();
  const history = new HistoryWriter(args.history);
  const nc = await natsConnect(args.url, `nemesis-client-${args.p}`);
  const client = new Client(args.p, {
    node: args.node,
    rng: new Rng(args.seed * 1000 + args.p),
    history,
    hangMs: args.hangMs,
    open: (prefix) =>
      args.raw
        ? openRawStore(nc, { bucket: args.bucket, prefix, timeout: args.timeout })
        : openJetStreamStore({ bucket: args.bucket, prefix, timeout: args.timeout }, { nc }),
  });
  console.log(JSON.stringify({ ready: args.p }));
  let steps = 0;
  while (!stopped && Date.now() - started < args.maxMs) {
    const ok = await client.step();
    steps++;
    // A failing cluster is not hammered: a short pause after a failure.
    if (!ok) await sleep(50);
    if (steps % 200 === 0) history.flush();
  }
  history.close();
  await Promise.race([nc.close().catch(() => {}), sleep(2_000)]);
  console.log(JSON.stringify({ done: args.p, steps }));
  Deno.exit(0);
}

if (import.meta.main) {
  await main(JSON.parse(Deno.args[0] ?? "{}") as WorkerArgs);
}
