// One benchmark worker: a separate Deno process that the driver (bench/main.ts) spawns and
// drives over JSON lines on stdin/stdout (see _protocol.ts). It runs one operation at a time,
// like one agent, against the target it was told to open, and reports every latency.

import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import type {
  Command,
  InitCommand,
  ListCommand,
  ListResult,
  PhaseCommand,
  PhaseResult,
  Reply,
  TargetName,
} from "./_protocol.ts";
import { TRAITS } from "./_protocol.ts";
import { Entries, type Target } from "./_target.ts";
import { openFileLibrary, openFileRaw } from "./_file_targets.ts";
import { openJetStreamLibrary, openJetStreamRaw } from "./_jetstream_targets.ts";
import { listOnce } from "./_list.ts";
import { openLibraryJetStream } from "./_library.ts";
import { readLines } from "./_pool.ts";
import { mulberry32 } from "./_stats.ts";

const WARMUP_KEYS = 32;

const ENCODER = new TextEncoder();

interface State {
  init: InitCommand;
  entries: Entries;
  nc: NatsConnection | undefined;
  target: Target | undefined;
  warmed: Set<TargetName>;
}

async function main(): Promise<void> {
  let state: State | undefined;
  for await (const line of readLines(Deno.stdin.readable)) {
    const command = JSON.parse(line) as Command;
    let reply: Reply;
    try {
      if (command.cmd === "init") {
        state = await initialise(command);
        reply = { ok: true };
      } else if (command.cmd === "exit") {
        await shutdown(state);
        await write({ ok: true });
        return;
      } else {
        if (state === undefined) throw new Error(`"${command.cmd}" before "init"`);
        reply = { ok: true, result: await handle(state, command) };
      }
    } catch (e) {
      reply = { ok: false, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
    }
    await write(reply);
  }
  await shutdown(state);
}

async function initialise(init: InitCommand): Promise<State> {
  const nc = init.servers.length > 0
    ? await connect({ servers: [...init.servers], name: `agentmem-bench-${init.index}` })
    : undefined;
  return { init, entries: new Entries(init.valueSize), nc, target: undefined, warmed: new Set() };
}

async function shutdown(state: State | undefined): Promise<void> {
  await state?.target?.close();
  await state?.nc?.close();
}

function handle(state: State, command: Exclude<Command, { cmd: "init" | "exit" }>) {
  switch (command.cmd) {
    case "open":
      return openTarget(state, command.target, command.location.dir, command.location.bucket);
    case "phase":
      return runPhase(requireTarget(state), command);
    case "seed":
      return requireTarget(state).seed(
        command.keys,
        command.content,
        command.valueSize ?? state.init.valueSize,
      );
    case "snapshot":
      return requireTarget(state).snapshot(command.keys);
    case "list":
      return runList(state, command);
  }
}

function requireTarget(state: State): Target {
  if (state.target === undefined) throw new Error("No target is open");
  return state.target;
}

async function open(
  state: State,
  name: TargetName,
  dir: string | undefined,
  bucket: string | undefined,
): Promise<Target> {
  const { entries, nc } = state;
  const needDir = () => {
    if (dir === undefined) throw new Error(`Target ${name} needs a directory`);
    return dir;
  };
  const needBucket = () => {
    if (bucket === undefined || nc === undefined) {
      throw new Error(`Target ${name} needs a bucket and a NATS connection`);
    }
    return { bucket, nc };
  };
  switch (name) {
    case "file":
      return await openFileLibrary(needDir(), entries);
    case "file-raw":
      return openFileRaw(needDir(), entries);
    case "jetstream": {
      const b = needBucket();
      return await openJetStreamLibrary(openLibraryJetStream, b.nc, b.bucket, entries);
    }
    case "jetstream-raw": {
      const b = needBucket();
      return await openJetStreamRaw(b.nc, b.bucket, entries);
    }
  }
}

async function openTarget(
  state: State,
  name: TargetName,
  dir: string | undefined,
  bucket: string | undefined,
): Promise<void> {
  await state.target?.close();
  state.target = undefined;
  if (!state.warmed.has(name)) {
    await warmUp(state, name);
    state.warmed.add(name);
  }
  state.target = await open(state, name, dir, bucket);
}

// Runs a few operations of every kind on private keys, so the first measured run does not pay
// for module loading, JIT compilation or a cold connection.
async function warmUp(state: State, name: TargetName): Promise<void> {
  const { warmup, index, warmupOps } = state.init;
  if (warmupOps <= 0) return;
  const isFile = name.startsWith("file");
  let dir: string | undefined;
  if (isFile) {
    dir = `${warmup.dir}/${name}-${index}`;
    await Deno.mkdir(dir, { recursive: true });
  }
  const target = await open(state, name, dir, isFile ? undefined : warmup.bucket);
  // Few keys, visited often: up to 8 workers warm up in one bucket at once, and their keys
  // together must stay well inside the store's capacity.
  const keys = Array.from(
    { length: Math.min(warmupOps, WARMUP_KEYS) },
    (_, i) => `warm-${name}-${index}-${i}`,
  );
  const cycle = (i: number) => keys[i % keys.length] as string;
  const c = { exists: 0, stale: 0, retries: 0 };
  try {
    for (const key of keys) await target.create(key);
    for (let i = 0; i < warmupOps; i++) await target.update(cycle(i), c);
    for (let i = 0; i < warmupOps; i++) await target.read(cycle(i));
    if (TRAITS[name].counter) {
      const counter = `warm-${name}-${index}-counter`;
      await target.seed([counter], "0", 0);
      for (let i = 0; i < warmupOps; i++) await target.increment(counter, c);
      await target.delete(counter);
    }
    for (const key of keys) await target.delete(key);
  } finally {
    await target.close();
    if (dir !== undefined) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

async function runPhase(target: Target, command: PhaseCommand): Promise<PhaseResult> {
  const { op, keys, count } = command;
  const random = mulberry32(command.seed);
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
  const start = performance.timeOrigin + performance.now();
  switch (op) {
    case "create":
      for (const key of keys) {
        await time(async () => {
          if (await target.create(key)) won.push(key);
          else c.exists++;
        });
      }
      break;
    case "delete":
      for (const key of keys) {
        await time(async () => {
          if (await target.delete(key)) won.push(key);
        });
      }
      break;
    case "update":
      for (let i = 0; i < count; i++) {
        const key = pick();
        await time(() => target.update(key, c));
      }
      break;
    case "read":
      for (let i = 0; i < count; i++) {
        const key = pick();
        await time(async () => {
          if (!(await target.read(key))) badReads++;
        });
      }
      break;
    case "counter":
      for (let i = 0; i < count; i++) {
        const key = pick();
        await time(() => target.increment(key, c));
      }
      break;
  }
  const end = performance.timeOrigin + performance.now();
  return { op, start, end, latencies, ...c, won, badReads };
}

async function runList(state: State, command: ListCommand): Promise<ListResult> {
  return await listOnce(command, state.nc, openLibraryJetStream);
}

async function write(reply: Reply): Promise<void> {
  const bytes = ENCODER.encode(JSON.stringify(reply) + "\n");
  for (let off = 0; off < bytes.length;) off += await Deno.stdout.write(bytes.subarray(off));
}

if (import.meta.main) await main();
