// nats-server on the power-cut file system: the single-server jetstream backend over a private
// nats-server whose store_dir is inside the mount. Each round starts from a baseline made durable
// by a clean reboot (the server stopped with SIGTERM, the file system synced and remounted, the
// server started again); writers (lanes in this
// process, each owning its keys) write until a seeded cut point; then the server is SIGKILLed, the
// power cut and the file system remounted, the server started again, and every key is judged
// against what was acknowledged. Go's syscalls bypass libc, so no shim applies here.
//
//   deno task powercut --nats [--cuts N] [--seed N]

import { MemoryError, NotFoundError, openJetStreamStore, type Store } from "../../mod.ts";
import type { NatsConnection } from "@nats-io/nats-core";
import { natsConnect, type NatsServer, retryUntil, startNatsServer } from "../_lib/nats_server.ts";
import { historyBucket } from "../_lib/jetstream_fixture.ts";
import { serverBinary } from "../_lib/binaries.ts";
import { Rng } from "../_lib/rng.ts";
import { entryFor, versionOf } from "./_content.ts";
import { judge, KeyModel, type KeyValue } from "./_model.ts";
import { PowerCutFs } from "./_pcfs.ts";

/** One server setup to measure. */
export interface NatsSetup {
  readonly version: "2.9.10" | "2.10.27";
  readonly syncAlways: boolean;
}

/** The setups of the report: both versions with default sync, and 2.10.27 syncing every write. */
export const NATS_SETUPS: readonly NatsSetup[] = [
  { version: "2.9.10", syncAlways: false },
  { version: "2.10.27", syncAlways: false },
  { version: "2.10.27", syncAlways: true },
];

/** What the cuts of one setup did. */
export interface NatsResult {
  readonly setup: NatsSetup;
  readonly cuts: number;
  readonly acknowledged: number;
  readonly lost: number;
  readonly torn: number;
  /** Acknowledged writes lost at each cut. */
  readonly lostPerCut: readonly number[];
  readonly errors: readonly string[];
  readonly examples: readonly string[];
}

const BUCKET = "powercut";
const LANES = 4;
const KEYS_PER_LANE = 2;
// Short, so that the writes in flight when the server is killed fail soon.
const TIMEOUT_MS = 1_500;

/** The setup in words. */
export function setupName(s: NatsSetup): string {
  return `nats-server ${s.version} (${s.syncAlways ? "sync_interval: always" : "default sync"})`;
}

/** Runs `cuts` rounds of one setup on a new power-cut file system. */
export async function runNatsPowercut(
  setup: NatsSetup,
  cuts: number,
  seed: number,
  log: (line: string) => void = console.log,
): Promise<NatsResult> {
  const bin = serverBinary(setup.version);
  if (bin === undefined) throw new Error(`nats-server ${setup.version} is missing`);
  const rng = new Rng(seed);
  const keys = new Map<string, KeyModel>();
  const group = { name: "j", durable: true, readBeforeUpdate: false };
  for (let l = 0; l < LANES; l++) {
    for (let i = 0; i < KEYS_PER_LANE; i++) {
      keys.set(`j${l}-${i}`, new KeyModel(`j${l}-${i}`, group, null));
    }
  }
  const errors: string[] = [];
  const examples: string[] = [];
  const lostPerCut: number[] = [];
  let acknowledged = 0, torn = 0;
  await using pc = await PowerCutFs.start();
  const storeDir = `${pc.mount}/js`;
  await Deno.mkdir(storeDir);
  await pc.remount();
  const server = await startNatsServer({
    binary: bin,
    storeDir,
    jetstream: false,
    config: `jetstream { store_dir: "${storeDir}"${
      setup.syncAlways ? ", sync_interval: always" : ""
    } }`,
  });
  const nc = await natsConnect(server.url, "agentmem-powercut");
  try {
    await retryUntil(() => historyBucket(nc, BUCKET));
    let store = await open(nc);
    await rewrite(store, keys);
    store = await cleanRestart(server, nc, pc);
    for (let cut = 1; cut <= cuts && errors.length === 0; cut++) {
      const target = rng.int(0, 40);
      let acks = 0;
      let stop = false;
      const lanes = Array.from(
        { length: LANES },
        (_, l) =>
          lane(
            store,
            [...keys.values()].filter((k) => k.key.startsWith(`j${l}-`)),
            new Rng(seed + cut * 13 + l),
            () => stop,
            () => acks++,
          ),
      );
      const giveUp = Date.now() + 15_000;
      while (acks < target && Date.now() < giveUp) await new Promise((r) => setTimeout(r, 1));
      await new Promise((r) => setTimeout(r, rng.int(0, 20)));
      stop = true;
      // The power goes: the server dies with the machine, then the file system loses what no
      // fsync covered. The writes in flight fail (or were answered just before: acknowledged).
      await server.kill("SIGKILL");
      await pc.cut();
      for (const problem of await Promise.all(lanes)) {
        if (problem) errors.push(`cut ${cut}: ${problem}`);
      }
      store = await restart(server, nc);
      let lost = 0;
      for (const k of keys.values()) {
        acknowledged += k.timeline.length - 1;
        const found = await retryUntil(() => readKey(store, k.key), 30_000);
        if ("torn" in found) {
          torn++;
          if (examples.length < 20) examples.push(`cut ${cut}: ${k.key} is torn: ${found.torn}`);
          continue;
        }
        const v = judge(k, found.value);
        lost += v.lost;
        if (v.lost > 0 && examples.length < 20) {
          examples.push(
            `cut ${cut}: ${k.key} lost ${v.lostKinds.join(", ")}: holds ${
              found.value ?? "nothing"
            }, acknowledged ${k.acked ?? "nothing"}`,
          );
        }
      }
      lostPerCut.push(lost);
      await rewrite(store, keys);
      store = await cleanRestart(server, nc, pc);
      if (cut % 10 === 0 || cut === cuts) {
        log(
          `powercut: ${setupName(setup)}: ${cut}/${cuts} cuts, ${acknowledged} acknowledged, ${
            lostPerCut.reduce((a, b) => a + b, 0)
          } lost`,
        );
      }
    }
  } catch (e) {
    errors.push(e instanceof Error ? e.message : String(e));
  } finally {
    await nc.close().catch(() => {});
    await server.stop();
  }
  return {
    setup,
    cuts: lostPerCut.length,
    acknowledged,
    lost: lostPerCut.reduce((a, b) => a + b, 0),
    torn,
    lostPerCut,
    errors,
    examples,
  };
}

function open(nc: NatsConnection): Promise<Store> {
  return openJetStreamStore({
    bucket: BUCKET,
    prefix: "",
    readBeforeUpdate: false,
    timeout: TIMEOUT_MS,
  }, { nc });
}

// A clean reboot: the server stops cleanly (it flushes and fsyncs its files), the file system
// syncs everything and mounts again, the server starts. What the store holds now is the next
// round's durable baseline. nats-server fsyncs no directory, so without the file system's sync a
// cut would lose every file it made since the last reboot, the bucket's own included (on a
// journaling file system, the next journal commit a few seconds later makes them durable).
async function cleanRestart(
  server: NatsServer,
  nc: NatsConnection,
  pc: PowerCutFs,
): Promise<Store> {
  await server.kill("SIGTERM");
  await pc.remount();
  return await restart(server, nc);
}

// Starts the server again and binds once the client is back: a request sent before the client
// has reconnected is dropped, and would wait out its whole timeout.
async function restart(server: NatsServer, nc: NatsConnection): Promise<Store> {
  await server.restart();
  await retryUntil(
    () =>
      Promise.race([
        nc.flush(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no reconnect")), 300)),
      ]),
    15_000,
    50,
  );
  return await retryUntil(() => open(nc), 30_000);
}

// Writes a new version of every key and starts the next round from it.
async function rewrite(store: Store, keys: Map<string, KeyModel>): Promise<void> {
  for (const k of keys.values()) {
    const version = k.next++;
    const { description, content } = entryFor(k.key, version);
    await retryUntil(() => store.update(k.key, description, content), 30_000);
    k.reset(version);
  }
}

async function readKey(store: Store, key: string): Promise<{ value: KeyValue } | { torn: string }> {
  try {
    const e = await store.read(key);
    const v = versionOf(key, e.description);
    if (v === undefined || entryFor(key, v).content !== e.content) {
      return { torn: `holds ${e.description}` };
    }
    return { value: v };
  } catch (e) {
    if (e instanceof NotFoundError) return { value: null };
    throw e;
  }
}

// One writer: creates, updates and deletes its keys until `stopped()`. Returns a failure that is
// not the server going away, if any.
async function lane(
  store: Store,
  keys: KeyModel[],
  rng: Rng,
  stopped: () => boolean,
  acked: () => void,
): Promise<string | undefined> {
  while (!stopped()) {
    const k = rng.pick(keys);
    const op = k.acked === null ? "create" : rng.next() < 0.75 ? "update" : "delete";
    const version = op === "delete" ? 0 : k.next++;
    k.pending = { value: op === "delete" ? null : version };
    try {
      if (op === "delete") await store.delete(k.key);
      else {
        const { description, content } = entryFor(k.key, version);
        await store[op](k.key, description, content);
      }
    } catch (e) {
      // The server died under the write: its outcome stays open (k.pending).
      if (stopped() && e instanceof MemoryError) return undefined;
      return `${k.key}: ${e instanceof Error ? e.message : String(e)}`;
    }
    k.timeline.push(k.pending.value);
    k.pending = undefined;
    acked();
    await new Promise((r) => setTimeout(r, rng.int(0, 3)));
  }
  return undefined;
}
