// One nemesis run, from inside the hub namespace: starts the cluster in the node namespaces,
// creates the bucket, starts the client processes, runs the nemesis, heals, reads the final state
// through the library and checks the history. Writes `<dir>/summary.json`.
//
//   ip netns exec <hub> deno run --allow-all tests/nemesis/run.ts '<json RunArgs>'

import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { history, MemoryError, NotFoundError, openJetStreamStore, type Store } from "../../mod.ts";
import { natsConnect } from "../_lib/nats_server.ts";
import { historyBucket } from "../_lib/jetstream_fixture.ts";
import { check, type Verdict } from "./checker.ts";
import { type ClusterNode, startNsCluster } from "./cluster.ts";
import { type FinalRecord, HistoryWriter, readHistory, type VersionsRecord } from "./history.ts";
import { healAll, runNemesis, type Schedule } from "./nemesis.ts";
import { openRawStore } from "./raw_store.ts";
import { Rng } from "../_lib/rng.ts";
import type { WorkerArgs } from "./worker.ts";
import { type Child, spawnDeno } from "../_lib/spawn.ts";

/** What the outer process asks for. */
export interface RunArgs {
  readonly seed: number;
  readonly durationMs: number;
  readonly bin: string;
  readonly nodes: readonly string[];
  readonly dir: string;
  readonly clients: number;
  readonly replicas: number;
  readonly timeout: number;
  readonly marginMs: number;
  readonly syncAlways: boolean;
  readonly schedule: Schedule;
  /** Stop the nemesis after this many rounds of every fault. */
  readonly rounds?: number;
  /** Raw kv calls instead of the library, in the clients and for the final reads. */
  readonly raw?: boolean;
}

/** What `summary.json` holds. */
export interface RunSummary {
  readonly verdict: Verdict;
  readonly faults: readonly string[];
  readonly error?: string;
}

export const BUCKET = "nemesis";
const STREAM = `KV_${BUCKET}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => console.log(line);

async function retry<T>(fn: () => Promise<T>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (let i = 0;; i++) {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof MemoryError && e.code === "config") throw e;
      if (Date.now() > end) throw new Error(`${what} did not succeed within ${ms} ms: ${e}`);
      await sleep(Math.min(1_000, 100 * (i + 1)));
    }
  }
}

// A client process; closing its stdin stops it. Past `limitMs` it is killed.
function spawnClient(args: WorkerArgs, limitMs: number): Child {
  return spawnDeno(new URL("./worker.ts", import.meta.url), [JSON.stringify(args)], {
    name: `nemesis client ${args.p}`,
    stdin: "piped",
    timeLimitMs: limitMs,
  });
}

async function main(a: RunArgs): Promise<void> {
  const cluster = await startNsCluster({
    bin: a.bin,
    namespaces: a.nodes,
    dir: a.dir,
    syncAlways: a.syncAlways,
  });
  const clients: Child[] = [];
  const events = new HistoryWriter(`${a.dir}/nemesis.jsonl`, 1);
  let faults: string[] = [];
  let error: string | undefined;
  const nc = await natsConnect(cluster.urls, "nemesis-controller");
  try {
    const jsm = await jetstreamManager(nc, { timeout: 2_000, checkAPI: false });
    // A node sometimes never joins the new cluster's JetStream group ("no suitable peers for
    // placement"); then the cluster starts over, a bounded number of times.
    for (let attempt = 1;; attempt++) {
      try {
        // Raw kv calls keep no history: a bucket of one message per key. The library writes
        // with history (the default) into a bucket made for it.
        await retry<unknown>(
          () =>
            a.raw
              ? new Kvm(nc).create(BUCKET, { history: 1, replicas: a.replicas })
              : historyBucket(nc, BUCKET, { replicas: a.replicas }),
          30_000,
          "creating the bucket",
        );
        break;
      } catch (e) {
        if (attempt >= 3) throw e;
        log(`nemesis: the cluster did not form (${e}); starting it again`);
        await cluster.reset();
      }
    }
    const warm = await retry(
      () => openStoreFor(nc, a, "warm", a.timeout),
      60_000,
      "opening the bucket",
    );
    await retry(
      () => warm.create("up", "the cluster takes writes", "yes"),
      60_000,
      "a first write",
    );
    log(`nemesis: cluster up, R${a.replicas} bucket ready`);

    for (let p = 0; p < a.clients; p++) {
      const node = p % cluster.nodes.length;
      clients.push(spawnClient({
        p,
        node,
        url: cluster.urls[node] as string,
        bucket: BUCKET,
        seed: a.seed,
        timeout: a.timeout,
        hangMs: a.timeout + a.marginMs + 5_000,
        history: `${a.dir}/client-${p}.jsonl`,
        maxMs: a.durationMs + 120_000,
        raw: a.raw ?? false,
      }, a.durationMs + 300_000));
    }
    for (let i = 0; i < 600 && !clients.every((c) => c.records.some((r) => "ready" in r)); i++) {
      await sleep(100);
    }
    log(`nemesis: ${clients.length} client processes running`);

    const leader = async (): Promise<ClusterNode | undefined> => {
      for (let i = 0; i < 3; i++) {
        const name = await jsm.streams.info(STREAM).then(
          (si) => si.cluster?.leader,
          () => undefined,
        );
        const node = cluster.nodes.find((n) => n.name === name);
        if (node) return node;
        await sleep(300);
      }
      return undefined;
    };
    faults = await runNemesis({
      cluster,
      rng: new Rng(a.seed),
      schedule: a.schedule,
      endAt: Date.now() + a.durationMs,
      ...(a.rounds === undefined ? {} : { rounds: a.rounds }),
      leader,
      record: (r) => events.add(r),
      log,
    });
    await healAll(cluster);

    // Stop the clients: they finish their current call (bounded by its deadline) and exit.
    await Promise.all(clients.map((c) => c.closeStdin()));
    const bound = sleep(a.timeout + a.marginMs + 30_000).then(() => "late" as const);
    for (const c of clients) {
      if ((await Promise.race([c.status, bound])) === "late") c.kill("SIGKILL");
    }
    log("nemesis: clients stopped, cluster healed; reading the final state");
    await settle(jsm, a.replicas);
    await readFinal(nc, a, events);
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
    log(`nemesis: run failed: ${error}`);
  } finally {
    for (const c of clients) c.kill("SIGKILL");
    events.close();
    await Promise.race([nc.close().catch(() => {}), sleep(2_000)]);
    await cluster.stop();
  }
  const paths = [`${a.dir}/nemesis.jsonl`, ...clients.map((_, p) => `${a.dir}/client-${p}.jsonl`)];
  const verdict = check(await readHistory(paths), { deadlineMs: a.timeout, marginMs: a.marginMs });
  const summary: RunSummary = { verdict, faults, ...(error === undefined ? {} : { error }) };
  await Deno.writeTextFile(`${a.dir}/summary.json`, JSON.stringify(summary));
}

// A store through the library, or raw kv calls where the run asked for them.
function openStoreFor(
  nc: Awaited<ReturnType<typeof natsConnect>>,
  a: RunArgs,
  prefix: string,
  timeout: number,
): Promise<Store> {
  return a.raw
    ? openRawStore(nc, { bucket: BUCKET, prefix, timeout })
    : openJetStreamStore({ bucket: BUCKET, prefix, timeout }, { nc });
}

// Waits (bounded) until the stream has a leader and every replica is current.
async function settle(jsm: Awaited<ReturnType<typeof jetstreamManager>>, replicas: number) {
  for (let i = 0; i < 120; i++) {
    const si = await jsm.streams.info(STREAM).catch(() => undefined);
    const peers = si?.cluster?.replicas ?? [];
    if (
      si?.cluster?.leader && peers.length === replicas - 1 &&
      peers.every((p) => p.current && !p.offline)
    ) {
      return;
    }
    await sleep(500);
  }
  log("nemesis: the replicas were not all current after 60 s; reading anyway");
}

// Reads every key any client touched, through the library, and records its final value.
async function readFinal(
  nc: Awaited<ReturnType<typeof natsConnect>>,
  a: RunArgs,
  out: HistoryWriter,
): Promise<void> {
  const ops = (await readHistory(
    Array.from({ length: a.clients }, (_, p) => `${a.dir}/client-${p}.jsonl`),
  )).filter((r) => r.t === "op");
  const keys = new Map<string, { ns: string; key: string }>();
  for (const o of ops) keys.set(`${o.ns}/${o.key}`, { ns: o.ns, key: o.key });
  const stores = new Map<string, Store>();
  const storeFor = async (ns: string) => {
    let s = stores.get(ns);
    if (!s) {
      s = await retry(
        () => openStoreFor(nc, a, ns, 5_000),
        60_000,
        `opening ${ns}`,
      );
      stores.set(ns, s);
    }
    return s;
  };
  const queue = [...keys.values()];
  const reader = async () => {
    for (let item = queue.pop(); item !== undefined; item = queue.pop()) {
      const { ns, key } = item;
      const store = await storeFor(ns);
      const value = await retry(
        () =>
          store.read(key).then((e) => e.content, (e) => {
            if (e instanceof NotFoundError) return null;
            throw e;
          }),
        60_000,
        `reading ${ns}/${key}`,
      );
      out.add({ t: "final", ns, key, value } satisfies FinalRecord);
      if (a.raw) continue;
      const kept = await retry(() => history(store, key), 60_000, `the history of ${ns}/${key}`);
      out.add(
        {
          t: "versions",
          ns,
          key,
          versions: kept.map((v) => ({
            rev: v.revision,
            op: v.op,
            ...(v.callId === undefined ? {} : { id: v.callId }),
          })),
        } satisfies VersionsRecord,
      );
    }
  };
  await Promise.all(Array.from({ length: 8 }, reader));
  log(`nemesis: read ${keys.size} keys at the end`);
}

if (import.meta.main) {
  await main(JSON.parse(Deno.args[0] ?? "{}") as RunArgs);
  Deno.exit(0);
}
