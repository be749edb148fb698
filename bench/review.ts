// `deno task bench:review`: what review costs, on the file backend and on jetstream (a private
// nats-server). Per trial, op by op in alternating order: a write held for review (a tainted
// run's, on a store with `review: "tainted"`) against the same write made (a clean run's); a
// `review: false` store's write against the store layer of the library before the gate over the
// same backend operations; then `proposals()` of 1,024 pending. Writes bench/review.json and
// re-renders BENCH.md from it and the saved bench/results.json.

import {
  createJetStreamBucket,
  JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  MAX_PENDING_PROPOSALS,
  openFileStore,
  openJetStreamStore,
  proposals,
  rejectProposal,
  Scope,
  type Store,
} from "../mod.ts";
import { extensionsOf } from "../store/build.ts";
import type { NatsConnection } from "@nats-io/nats-core";
import { natsConnect, startNatsServer } from "../tests/harness.ts";
import process from "node:process";
import { progress } from "./_format.ts";
import { median, ratios } from "./_stats.ts";
import type { ReviewResults, ReviewRow } from "./_review_report.ts";

const TRIALS = Number(Deno.args[0] ?? 15);
const OPS = 40;
const BODY = "a line of a memory's body\n".repeat(40);
const OUT = new URL("review.json", import.meta.url);

const LAYER_WRITES = 4_000;

// The store layer's own time per update, over backend operations that do nothing: the library
// before the gate against this one (`review: false`), interleaved.
async function layerCost(): Promise<ReviewResults["layer"]> {
  const nothing = {
    info: { backend: "nothing", location: "" },
    list: () => Promise.resolve([]),
    read: () => Promise.resolve({ description: "", content: "" }),
    create: () => Promise.resolve(),
    update: () => Promise.resolve(),
    delete: () => Promise.resolve(true),
  };
  const { buildStore } = await import("../store/build.ts");
  const stores = {
    before: (await libraryBefore()).buildStore(nothing),
    now: buildStore(nothing, { review: false }),
  };
  const us: Record<"before" | "now", number[]> = { before: [], now: [] };
  for (let t = 0; t < 2 * TRIALS; t++) {
    for (const name of t % 2 === 0 ? ["before", "now"] as const : ["now", "before"] as const) {
      const store = stores[name];
      const t0 = performance.now();
      for (let i = 0; i < LAYER_WRITES; i++) await store.update("k", "about k", BODY);
      us[name].push(((performance.now() - t0) * 1000) / LAYER_WRITES);
    }
  }
  return { beforeUs: median(us.before), nowUs: median(us.now) };
}

type Open = (
  options: { review: false | "tainted"; durable?: boolean; readBeforeUpdate?: boolean },
) => Promise<Store>;

// Requests a store sends, where it sends them over a NATS connection of its own (see `run`).
const requestsOf = new WeakMap<Store, () => number>();

/** The commit before the gate (budgets and review): `review: false` is measured against it. */
const BEFORE_GATE = "c225c7b3d68cd9a1be69d65fb1eaa9d81cfe1aec";

// The store layer at BEFORE_GATE, extracted from git.
async function libraryBefore(): Promise<{ buildStore: (ops: unknown) => Store }> {
  const root = new URL("..", import.meta.url).pathname;
  const into = await Deno.makeTempDir({ prefix: "agentmem-bench-before-" });
  globalThis.addEventListener("unload", () => Deno.removeSync(into, { recursive: true }));
  const script = `git -C "$1" archive "$2" | tar -x -C "$3"`;
  const args = ["-c", script, "sh", root, BEFORE_GATE, into];
  const out = await new Deno.Command("sh", { args, stderr: "piped" }).output();
  if (!out.success) throw new Error(`cannot extract ${BEFORE_GATE.slice(0, 7)} from git`);
  return await import(`file://${into}/store/_store.ts`);
}

async function measure(backend: string, open: Open): Promise<ReviewRow> {
  const plain = await open({ review: false });
  const held = await open({ review: "tainted" });
  // Both stores over one keyspace; the held writes go to keys of their own, which they never
  // change (a held write is a proposal), so their run's reads stay current.
  const keys = Array.from({ length: OPS }, (_, i) => `k${i}`);
  const heldKeys = keys.map((k) => `held.${k}`);
  const offKeys = keys.map((k) => `off.${k}`);
  for (const k of [...keys, ...heldKeys, ...offKeys]) await plain.create(k, `about ${k}`, BODY);
  const clean = new Scope({ run: "run-clean" });
  const bad = new Scope({ run: "run-bad", tainted: true });
  for (const k of keys) await plain.read(k, { scope: clean });
  for (const k of heldKeys) await held.read(k, { scope: bad });
  // The store layer of the library before the gate, over the very backend operations of a
  // `review: false` store (non-durable on the file backend, so the layer's own cost shows).
  const fast = await open({ review: false, durable: false, readBeforeUpdate: false });
  const before = (await libraryBefore()).buildStore(extensionsOf(fast)!.ops);
  const pairs = { update: [] as number[][], create: [] as number[][], off: [] as number[][] };
  // The client's CPU (ms, every thread of this process) over the held and the plain updates, and
  // the requests per update each side sent, where a store has a connection of its own.
  const cpu: [number, number] = [0, 0];
  let requests: [number, number] | undefined;
  const perOp: number[][] = [];
  for (let t = 0; t < TRIALS; t++) {
    progress(`review: ${backend} trial ${t + 1}/${TRIALS}`);
    // Each pair goes op by op, alternating which side goes first, so both meet the same load.
    const pair = async (
      a: (i: number) => Promise<unknown>,
      b: (i: number) => Promise<unknown>,
      cpu?: [number, number],
    ): Promise<[number, number]> => {
      const sums: [number, number] = [0, 0];
      for (let i = 0; i < OPS; i++) {
        for (const side of (i + t) % 2 === 0 ? [0, 1] as const : [1, 0] as const) {
          const [c0, t0] = [process.cpuUsage(), performance.now()];
          await (side === 0 ? a : b)(i);
          sums[side] += performance.now() - t0;
          const c = process.cpuUsage(c0);
          if (cpu !== undefined) cpu[side] += (c.user + c.system) / 1000;
        }
      }
      return sums;
    };
    const sent = [requestsOf.get(held)?.(), requestsOf.get(plain)?.()];
    const [heldUpdate, plainUpdate] = await pair(
      (i) => held.update(heldKeys[i]!, `about k${i}`, `${BODY}${t}!`, { scope: bad }),
      (i) => plain.update(keys[i]!, `about k${i}`, `${BODY}${t}`, { scope: clean }),
      cpu,
    );
    const after = [requestsOf.get(held)?.(), requestsOf.get(plain)?.()];
    if (after[0] !== undefined && after[1] !== undefined) {
      requests = [(after[0] - sent[0]!) / OPS, (after[1] - sent[1]!) / OPS];
    }
    const [heldCreate, plainCreate] = await pair(
      (i) => held.create(`h${t}.${i}`, "new", BODY, { scope: bad }),
      (i) => plain.create(`c${t}.${i}`, "new", BODY, { scope: clean }),
    );
    const [off, then] = await pair(
      (i) => fast.update(offKeys[i]!, `about k${i}`, `${BODY}o${t}`),
      (i) => before.update(offKeys[i]!, `about k${i}`, `${BODY}b${t}`),
    );
    const took = { heldUpdate, plainUpdate, heldCreate, plainCreate, off, before: then };
    pairs.update.push([took.heldUpdate!, took.plainUpdate!]);
    pairs.create.push([took.heldCreate!, took.plainCreate!]);
    pairs.off.push([took.off!, took.before!]);
    perOp.push([took.plainUpdate! / OPS, took.heldUpdate! / OPS]);
    // Untimed: the trial's proposals rejected, so every trial holds its writes in the same queue
    // (and no number of trials fills it).
    for (const p of await proposals(held)) await rejectProposal(held, p.id);
  }
  // Fill the queue, then list it.
  const have = (await proposals(held)).length;
  for (let i = have; i < MAX_PENDING_PROPOSALS; i += 32) {
    const n = Math.min(32, MAX_PENDING_PROPOSALS - i);
    await Promise.all(
      Array.from({ length: n }, (_, j) => held.create(`q${i + j}`, "queued", BODY, { scope: bad })),
    );
  }
  const lists: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t0 = performance.now();
    const listed = await proposals(held);
    lists.push(performance.now() - t0);
    if (listed.length !== MAX_PENDING_PROPOSALS) throw new Error(`listed ${listed.length}`);
  }
  return {
    backend,
    heldUpdate: ratios(pairs.update),
    heldCreate: ratios(pairs.create),
    reviewOff: ratios(pairs.off),
    plainMs: median(perOp.map((p) => p[0]!)),
    heldMs: median(perOp.map((p) => p[1]!)),
    heldCpuMs: cpu[0] / (OPS * TRIALS),
    plainCpuMs: cpu[1] / (OPS * TRIALS),
    ...(requests === undefined ? {} : { heldRequests: requests[0], plainRequests: requests[1] }),
    listMs: median(lists),
  };
}

async function run(): Promise<ReviewResults> {
  const rows: ReviewRow[] = [];
  const dir = await Deno.makeTempDir({ prefix: "agentmem-bench-review-" });
  try {
    rows.push(await measure("file", (o) => openFileStore({ dir, ...o })));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  await using server = await startNatsServer();
  const connections: NatsConnection[] = [];
  const connect = async () => {
    const c = await natsConnect(server.url);
    connections.push(c);
    return c;
  };
  try {
    await createJetStreamBucket(await connect(), {
      bucket: "review",
      replicas: 1,
      storage: "file",
      maxValueSize: JETSTREAM_HISTORY_MIN_VALUE_SIZE,
    });
    const open: Open = async ({ review, readBeforeUpdate }) => {
      const nc = await connect();
      let n = 0;
      const publish = nc.publish.bind(nc);
      nc.publish = (...args) => (n++, publish(...args));
      const store = await openJetStreamStore(
        { bucket: "review", prefix: "bench", review, readBeforeUpdate },
        { nc },
      );
      requestsOf.set(store, () => n);
      return store;
    };
    rows.push(await measure("jetstream", open));
  } finally {
    await Promise.all(connections.map((c) => c.close()));
  }
  progress("review: the store layer's own cost");
  const layer = await layerCost();
  progress("");
  return { startedAt: new Date().toISOString(), trials: TRIALS, ops: OPS, rows, layer };
}

if (import.meta.main) {
  const results = await run();
  await Deno.writeTextFile(OUT, JSON.stringify(results, null, 2) + "\n");
  const report = await import("./report.ts");
  const saved = JSON.parse(await Deno.readTextFile(new URL("results.json", import.meta.url)));
  const { summarize } = await import("./summarize.ts");
  await report.writeBenchMd({ ...saved, summary: summarize(saved.runs, saved.lists, saved.micro) });
  const { reviewSection } = await import("./_review_report.ts");
  console.log(reviewSection());
}
