// One benchmark worker: a separate Deno process that the driver spawns and drives over JSON lines
// (bench/_pool.ts). It runs one operation at a time, like one agent, against the target it was
// told to open, and reports every latency; for bench/peers.ts it runs a peer's workload.

import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { listOnce } from "./_list.ts";
import { openStore, seed } from "./_location.ts";
import type { Peer } from "./_peers.ts";
import { serve } from "./_pool.ts";
import type { Command, Location, Op, TargetName } from "./_protocol.ts";
import { fileRawTarget, jetStreamRawTarget } from "./_raw.ts";
import { mulberry32 } from "../tests/harness.ts";
import { entriesOf, libraryTarget, type Target } from "./_target.ts";

/** A worker's phase: start, end (epoch ms), each latency (µs), conflicts, keys won, bad reads. */
export type PhaseResult = Awaited<ReturnType<typeof runPhase>>;

type Init = Extract<Command, { cmd: "init" }>;
type Phase = Extract<Command, { cmd: "phase" }>;

// Few keys, visited often: up to 8 workers warm up in one bucket at once, and their keys together
// must stay well inside the store's capacity.
const WARMUP_KEYS = 32;

let init: Init | undefined;
let nc: NatsConnection | undefined;
let entries = entriesOf(0);
let target: Target | undefined;
let peer: Peer | undefined;
const warmed = new Set<TargetName>();

async function handle(command: Command): Promise<unknown> {
  if (command.cmd === "init") {
    [init, entries] = [command, entriesOf(command.valueSize)];
    const name = `agentmem-bench-${command.index}`;
    if (command.servers.length > 0) nc = await connect({ servers: [...command.servers], name });
    return;
  }
  if (init === undefined) throw new Error(`"${command.cmd}" before "init"`);
  // The peers' modules (SDKs, SQLite) load only in the workers that run them.
  const peers = command.cmd.startsWith("peer") ? await import("./_peers.ts") : undefined;
  switch (command.cmd) {
    case "open":
      if (!warmed.has(command.target)) await warmUp(init, command.target);
      warmed.add(command.target);
      target = await open(command.target, command.location);
      return;
    case "phase":
      if (target === undefined) throw new Error("No target is open");
      return await runPhase(target, command);
    case "list":
      return await listOnce(command, nc);
    case "peer-open":
      await peer?.close?.();
      peer = await peers?.openPeer(command.system, command.location, nc);
      return;
    case "peer-run":
      if (peer === undefined) throw new Error("No peer is open");
      return await peers?.runPeer(peer, command.op, command.keys, command.reps);
    case "peer-close":
      await peer?.close?.();
      peer = undefined;
      return;
  }
  throw new Error(`Unknown command "${command.cmd}"`);
}

async function open(name: TargetName, location: Location): Promise<Target> {
  if (name === "file-raw") return fileRawTarget(location.dir as string, entries);
  const bucket = location.bucket as string;
  if (name === "jetstream-raw") {
    return await jetStreamRawTarget(nc as NatsConnection, bucket, entries);
  }
  return libraryTarget(await openStore(location, nc), entries, name === "jetstream");
}

// Runs a few operations of every kind on private keys, so the first measured run does not pay
// for module loading, JIT compilation or a cold connection.
async function warmUp({ warmup, index, warmupOps }: Init, name: TargetName): Promise<void> {
  if (warmupOps <= 0) return;
  const onFile = name.startsWith("file");
  const dir = `${warmup.dir}/${name}-${index}`;
  if (onFile) await Deno.mkdir(dir, { recursive: true });
  const location: Location = onFile ? { dir } : { bucket: warmup.bucket as string };
  const t = await open(name, location);
  const prefix = `warm-${name}-${index}`;
  const keys = Array.from({ length: Math.min(warmupOps, WARMUP_KEYS) }, (_, i) => `${prefix}-${i}`);
  const phase = (op: Op, keys: string[]) =>
    runPhase(t, { cmd: "phase", op, keys, count: warmupOps, seed: index });
  for (const op of ["create", "update", "read"] as const) await phase(op, keys);
  if (!onFile) {
    await seed(location, [`${prefix}-counter`], "0", nc);
    for (const op of ["counter", "delete"] as const) await phase(op, [`${prefix}-counter`]);
  }
  await phase("delete", keys);
  if (onFile) await Deno.remove(dir, { recursive: true });
}

async function runPhase(t: Target, { op, keys, count, seed }: Phase) {
  const random = mulberry32(seed);
  const c = { exists: 0, stale: 0, retries: 0 };
  const latencies: number[] = [];
  const won: string[] = [];
  let badReads = 0;
  const call = {
    create: async (key: string) => void ((await t.create(key)) ? won.push(key) : c.exists++),
    delete: async (key: string) => void ((await t.delete(key)) && won.push(key)),
    update: (key: string) => t.update(key, c),
    read: async (key: string) => void ((await t.read(key)) || badReads++),
    counter: (key: string) => t.increment(key, c),
  }[op];
  // Create and delete visit every key once, in order; the others pick `count` keys at random.
  const once = op === "create" || op === "delete";
  const start = performance.timeOrigin + performance.now();
  for (let i = 0; i < (once ? keys.length : count); i++) {
    const key = keys[once ? i : Math.floor(random() * keys.length)] as string;
    const t0 = performance.now();
    await call(key);
    latencies.push(Math.round((performance.now() - t0) * 1000 * 10) / 10);
  }
  const end = performance.timeOrigin + performance.now();
  return { op, start, end, latencies, ...c, won, badReads };
}

if (import.meta.main) {
  await serve(handle, async () => {
    await peer?.close?.();
    await nc?.close();
  });
}
