// One benchmark worker: a separate Deno process that the driver (bench/main.ts) spawns and
// drives over JSON lines on stdin/stdout (bench/_protocol.ts). It runs one operation at a time,
// like one agent, against the target it was told to open, and reports every latency; for
// bench/peers.ts it runs a peer's workload the same way.

import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import type { Command, Location, PhaseResult, TargetName } from "./_protocol.ts";
import { backendOf } from "./_protocol.ts";
import { needNats, openStore, seed } from "./_location.ts";
import { listOnce } from "./_list.ts";
import { serve } from "./_pool.ts";
import { fileRawTarget } from "./_raw.ts";
import { jetStreamRawTarget } from "./_jetstream_raw.ts";
import { Entries, libraryTarget, type Target } from "./_target.ts";
import type { Peer } from "./_peers.ts";
import { mulberry32 } from "./_stats.ts";

type Init = Extract<Command, { cmd: "init" }>;
type Phase = Extract<Command, { cmd: "phase" }>;

// Few keys, visited often: up to 8 workers warm up in one bucket at once, and their keys together
// must stay well inside the store's capacity.
const WARMUP_KEYS = 32;

let init: Init | undefined;
let nc: NatsConnection | undefined;
let entries = new Entries(0);
let target: Target | undefined;
let peer: Peer | undefined;
const warmed = new Set<TargetName>();

async function handle(command: Command): Promise<unknown> {
  if (command.cmd === "init") {
    init = command;
    entries = new Entries(command.valueSize);
    if (command.servers.length > 0) {
      nc = await connect({
        servers: [...command.servers],
        name: `agentmem-bench-${command.index}`,
      });
    }
    return undefined;
  }
  if (init === undefined) throw new Error(`"${command.cmd}" before "init"`);
  switch (command.cmd) {
    case "open":
      if (!warmed.has(command.target)) await warmUp(init, command.target);
      warmed.add(command.target);
      target = await open(command.target, command.location);
      return undefined;
    case "phase":
      if (target === undefined) throw new Error("No target is open");
      return await runPhase(target, command);
    case "list":
      return await listOnce(command.method, command.location, nc, command.expect);
    case "peer-open":
      await peer?.close();
      peer = await (await import("./_peers.ts")).openPeer(command.system, command.location, nc);
      return undefined;
    case "peer-run":
      if (peer === undefined) throw new Error("No peer is open");
      return await (await import("./_peers.ts")).runPeer(
        peer,
        command.op,
        command.keys,
        command.reps,
      );
    case "peer-close":
      await peer?.close();
      peer = undefined;
      return undefined;
  }
  throw new Error(`Unknown command "${command.cmd}"`);
}

async function open(name: TargetName, location: Location): Promise<Target> {
  switch (name) {
    case "file":
      return libraryTarget(await openStore(location, nc), entries, false);
    case "jetstream":
      return libraryTarget(await openStore(location, nc), entries, true);
    case "file-raw":
      return fileRawTarget(location.dir as string, entries);
    case "jetstream-raw":
      return await jetStreamRawTarget(needNats(nc), location.bucket as string, entries);
  }
}

// Runs a few operations of every kind on private keys, so the first measured run does not pay
// for module loading, JIT compilation or a cold connection.
async function warmUp({ warmup, index, warmupOps }: Init, name: TargetName): Promise<void> {
  if (warmupOps <= 0) return;
  const isFile = backendOf(name) === "file";
  const dir = `${warmup.dir}/${name}-${index}`;
  if (isFile) await Deno.mkdir(dir, { recursive: true });
  const location: Location = isFile ? { dir } : { bucket: warmup.bucket as string };
  const t = await open(name, location);
  const keys = Array.from(
    { length: Math.min(warmupOps, WARMUP_KEYS) },
    (_, i) => `warm-${name}-${index}-${i}`,
  );
  const cycle = (i: number) => keys[i % keys.length] as string;
  const c = { exists: 0, stale: 0, retries: 0 };
  try {
    for (const key of keys) await t.create(key);
    for (let i = 0; i < warmupOps; i++) await t.update(cycle(i), c);
    for (let i = 0; i < warmupOps; i++) await t.read(cycle(i));
    if (!isFile) {
      const counter = `warm-${name}-${index}-counter`;
      await seed(location, [counter], "0", nc);
      for (let i = 0; i < warmupOps; i++) await t.increment(counter, c);
      await t.delete(counter);
    }
    for (const key of keys) await t.delete(key);
  } finally {
    if (isFile) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

async function runPhase(t: Target, { op, keys, count, seed }: Phase): Promise<PhaseResult> {
  const random = mulberry32(seed);
  const pick = () => keys[Math.floor(random() * keys.length)] as string;
  const c = { exists: 0, stale: 0, retries: 0 };
  const latencies: number[] = [];
  const won: string[] = [];
  let badReads = 0;
  const time = async (fn: () => Promise<void>) => {
    const t0 = performance.now();
    await fn();
    latencies.push(Math.round((performance.now() - t0) * 1000 * 10) / 10);
  };
  // Create and delete visit every key once, in order; the others pick `count` keys at random.
  const each = async (fn: (key: string) => Promise<void>) => {
    if (op === "create" || op === "delete") { for (const key of keys) await time(() => fn(key)); }
    else {
      for (let i = 0; i < count; i++) {
        const key = pick();
        await time(() => fn(key));
      }
    }
  };
  const start = performance.timeOrigin + performance.now();
  if (op === "create") {
    await each(async (key) => void ((await t.create(key)) ? won.push(key) : c.exists++));
  }
  if (op === "delete") await each(async (key) => void ((await t.delete(key)) && won.push(key)));
  if (op === "update") await each((key) => t.update(key, c));
  if (op === "read") await each(async (key) => void ((await t.read(key)) || badReads++));
  if (op === "counter") await each((key) => t.increment(key, c));
  const end = performance.timeOrigin + performance.now();
  return { op, start, end, latencies, ...c, won, badReads };
}

if (import.meta.main) {
  await serve(handle, async () => {
    await peer?.close();
    await nc?.close();
  });
}
