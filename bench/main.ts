// `deno task bench`: the contention benchmark. Spawns worker processes (bench/worker.ts) that
// hammer one shared directory and one shared bucket, next to baselines run the same way, checks
// invariants as it goes, and reports per backend and operation. See `--help` and BENCH.md.

import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { type NatsServer, startNatsServer } from "../tests/_lib/nats_server.ts";
import { type Config, type Keyspace, opsPerPhase, parseConfig, USAGE } from "./_args.ts";
import { machineInfo } from "./_machine.ts";
import { WorkerPool } from "./_pool.ts";
import type {
  Backend,
  ListMethod,
  ListResult,
  Location,
  Op,
  PhaseResult,
  TargetName,
} from "./_protocol.ts";
import { TRAITS } from "./_protocol.ts";
import { writeBenchMd } from "./report.ts";
import { renderText } from "./_report.ts";
import {
  type ListRecord,
  type PhaseSummary,
  type Results,
  type RunRecord,
  summarize,
} from "./_results.ts";
import { percentile } from "./_stats.ts";
import { checkPhase, COUNTER_KEY } from "./_invariants.ts";
import type { MicroResult } from "./micro.ts";
import type { PeersResult } from "./peers.ts";
import { denoEnv, denoRunArgs } from "../tests/_lib/deno_child.ts";
import { requireTools } from "../tests/_lib/needs.ts";

const TARGETS: Record<Backend, TargetName[]> = {
  file: ["file", "file-raw"],
  jetstream: ["jetstream", "jetstream-raw"],
};
const LIST_METHODS: Record<Backend, ListMethod[]> = {
  file: ["file", "file-headers", "file-bodies"],
  jetstream: ["jetstream", "jetstream-watch", "jetstream-keys-get"],
};
const RESULTS_JSON = new URL("./results.json", import.meta.url);

/** Shared state of one benchmark invocation. */
interface Context {
  readonly config: Config;
  readonly work: string;
  readonly nc: NatsConnection | undefined;
  readonly servers: readonly string[];
  readonly runId: string;
  readonly warmBucket: string | undefined;
  readonly targets: Record<Backend, TargetName[]>;
  seq: number;
  checks: number;
  readonly violations: string[];
  readonly notes: string[];
  readonly runs: RunRecord[];
  readonly lists: ListRecord[];
}

async function main(): Promise<number> {
  let parsed: Config | "help";
  try {
    parsed = parseConfig(Deno.args);
  } catch (e) {
    console.error(`${e instanceof Error ? e.message : e}\n\n${USAGE}`);
    return 2;
  }
  if (parsed === "help") {
    console.log(USAGE);
    return 0;
  }
  const config = parsed;
  const startedAt = new Date();
  const loadAtStart = Deno.loadavg()[0] ?? 0;
  const t0 = performance.now();
  const usesJetStream = config.backends.includes("jetstream");
  let server: NatsServer | undefined;
  let nc: NatsConnection | undefined;
  let warmBucket: string | undefined;
  const runId = randomId();
  const work = config.dir === undefined
    ? await Deno.makeTempDir({ prefix: "agentmem-bench-" })
    : await Deno.makeTempDir({ dir: config.dir, prefix: "agentmem-bench-" });
  const cleanup = async () => {
    if (nc !== undefined && warmBucket !== undefined) {
      const bucket = warmBucket;
      await new Kvm(nc).open(bucket).then((kv) => kv.destroy()).catch(() => {});
    }
    await nc?.close().catch(() => {});
    await server?.stop().catch(() => {});
    await Deno.remove(work, { recursive: true }).catch(() => {});
  };
  const onSignal = () => {
    cleanup().finally(() => Deno.exit(130));
  };
  Deno.addSignalListener("SIGINT", onSignal);
  try {
    let servers: readonly string[] = [];
    if (usesJetStream) {
      if (config.servers === undefined) {
        requireTools("bench (or pass --servers, or --backend file)", "nats-server");
        progress("starting a private nats-server");
        server = await startNatsServer();
        servers = [server.url];
      } else {
        servers = config.servers;
      }
      nc = await connect({ servers: [...servers], name: "agentmem-bench-driver" });
      warmBucket = `agentmem_bench_${runId}_warmup`;
      await new Kvm(nc).create(warmBucket, { history: 1 });
    }
    const ctx: Context = {
      config,
      work,
      nc,
      servers,
      runId,
      warmBucket,
      targets: TARGETS,
      seq: 0,
      checks: 0,
      violations: [],
      notes: [],
      runs: [],
      lists: [],
    };
    const runs = config.suites;
    if (runs.includes("main")) await runMain(ctx);
    if (runs.includes("lists")) await runLists(ctx);
    const micro = runs.includes("micro")
      ? await child<MicroResult>(ctx, "micro.ts", "micro: exists, capacity, rbu, in flight")
      : undefined;
    const peers = runs.includes("peers")
      ? await child<PeersResult>(ctx, "peers.ts", "peers and lost updates")
      : undefined;
    progress("");

    const machine = await machineInfo(nc?.info?.version);
    const busiest = Math.max(loadAtStart, machine.loadAverage[0] ?? 0);
    if (busiest >= machine.cores / 2) {
      ctx.notes.push(
        `The machine was not idle: the 1-minute load average was ${
          loadAtStart.toFixed(1)
        } when the run started and ${
          (machine.loadAverage[0] ?? 0).toFixed(1)
        } when it ended, on ${machine.cores} cores. Ratios hold up better than absolute numbers; rerun on a quiet machine for the record.`,
      );
    }
    const results: Results = {
      schema: 1,
      command: ["deno task bench", ...Deno.args].join(" "),
      startedAt: startedAt.toISOString(),
      durationMs: Math.round(performance.now() - t0),
      machine,
      config: publicConfig(config),
      runs: ctx.runs,
      lists: ctx.lists,
      invariants: { checks: ctx.checks, violations: ctx.violations },
      notes: [...ctx.notes, ...micro?.notes ?? [], ...peers?.notes ?? []],
      summary: summarize(ctx.runs, ctx.lists, micro?.targets ?? []),
      micro,
      peers,
    };
    console.log(renderText(results));
    await writeOutputs(config, results);
    if (ctx.violations.length > 0) {
      console.error(
        `\n!!! ${ctx.violations.length} INVARIANT(S) BROKEN !!!\n${
          ctx.violations.map((v) => `  - ${v}`).join("\n")
        }\n`,
      );
      return 1;
    }
    if (config.strict && results.summary.targets.some((t) => t.met === false)) {
      console.error("Some speed targets were missed (--strict)");
      return 1;
    }
    return 0;
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
    await cleanup();
  }
}

async function writeOutputs(config: Config, results: Results): Promise<void> {
  const json = JSON.stringify(results, null, 2) + "\n";
  if (config.json !== undefined) await Deno.writeTextFile(config.json, json);
  if (config.writeBenchMd) {
    await Deno.writeTextFile(RESULTS_JSON, json);
    await writeBenchMd(results);
    console.error("Wrote BENCH.md and bench/results.json");
  }
}

// ---------------------------------------------------------------------------------------------
// Main runs: every target of every backend, per keyspace, repeated and alternated.

async function runMain(ctx: Context): Promise<void> {
  const { config } = ctx;
  const pool = await startPool(ctx, config.processes);
  try {
    for (let trial = 0; trial < config.trials; trial++) {
      for (const keyspace of config.keyspaces) {
        for (const backend of config.backends) {
          for (const target of rotate(ctx.targets[backend], trial)) {
            progress(
              `main: trial ${
                trial + 1
              }/${config.trials}, ${keyspace}, ${target}, ${config.processes} processes`,
            );
            ctx.runs.push(
              await runOnce(ctx, pool, {
                section: "main",
                trial,
                keyspace,
                keys: config.keys,
                target,
                ops: config.mix.map((m) => m.op),
              }),
            );
          }
        }
      }
    }
  } finally {
    await pool.close();
  }
}

// bench/micro.ts and bench/peers.ts run as child processes (Deno KV needs --unstable-kv) on the
// same nats-server; each prints one JSON object.
async function child<T>(ctx: Context, script: string, what: string): Promise<T | undefined> {
  progress(what);
  const args = [
    ...denoRunArgs(),
    "--quiet",
    "--unstable-kv",
    "--allow-all",
    new URL(script, import.meta.url).pathname,
  ];
  if (ctx.config.quick) args.push("--quick");
  else args.push(`--trials=${ctx.config.trials}`);
  if (ctx.servers.length > 0) args.push(`--servers=${ctx.servers.join(",")}`);
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    env: denoEnv(),
    stdout: "piped",
    stderr: "inherit",
  })
    .output();
  if (out.success) return JSON.parse(new TextDecoder().decode(out.stdout)) as T;
  // The rest of the run is still worth writing out; the exit status says it failed.
  ctx.violations.push(`bench/${script} failed (exit ${out.code}); its tables are missing`);
  return undefined;
}

function startPool(ctx: Context, size: number): Promise<WorkerPool> {
  progress(`starting ${size} worker processes`);
  return WorkerPool.start(size, (index) => ({
    cmd: "init",
    index,
    servers: ctx.servers,
    valueSize: ctx.config.valueSize,
    warmupOps: ctx.config.warmup,
    warmup: { dir: `${ctx.work}/warmup`, bucket: ctx.warmBucket },
  }));
}

interface RunPlan {
  readonly section: "main";
  readonly trial: number;
  readonly keyspace: Keyspace;
  readonly keys: number;
  readonly target: TargetName;
  readonly ops: readonly Op[];
}

/** One run: a fresh location, every phase of the plan the target supports, invariants checked. */
async function runOnce(ctx: Context, pool: WorkerPool, plan: RunPlan): Promise<RunRecord> {
  const traits = TRAITS[plan.target];
  const n = pool.size;
  const location = await freshLocation(ctx, traits.backend);
  const view = (i: number) => viewKeys(plan.keyspace, plan.keys, n, i);
  const all = allKeys(plan.keyspace, plan.keys, n);
  const where = `${plan.section} trial ${
    plan.trial + 1
  } ${plan.keyspace} ${plan.target} (${n} processes)`;
  const phases: PhaseSummary[] = [];
  try {
    await pool.each(() => ({ cmd: "open", target: plan.target, location }));
    let created = false;
    for (const op of plan.ops) {
      if (op === "create") created = true;
      if (op === "counter" && !traits.counter) continue;
      if (op !== "create" && op !== "counter" && !created) {
        // Without a create phase, the keys are seeded untimed.
        await pool.one(0, { cmd: "seed", keys: all });
        created = true;
      }
      if (op === "counter") await pool.one(0, { cmd: "seed", keys: [COUNTER_KEY], content: "0" });
      const count = opsPerPhase(ctx.config, op);
      const results = await pool.each<PhaseResult>((i) => ({
        cmd: "phase",
        op,
        keys: op === "counter" ? [COUNTER_KEY] : view(i),
        count,
        seed: hashSeed(plan.trial, i, op, plan.section),
      }));
      phases.push(summarizePhase(op, results));
      await checkPhase(ctx, pool, where, op, results, all);
    }
  } finally {
    await dropLocation(ctx, location);
  }
  return {
    section: plan.section,
    trial: plan.trial,
    keyspace: plan.keyspace,
    processes: n,
    backend: traits.backend,
    target: plan.target,
    phases,
  };
}

function summarizePhase(op: Op, results: readonly PhaseResult[]): PhaseSummary {
  const latencies = results.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const start = Math.min(...results.map((r) => r.start));
  const end = Math.max(...results.map((r) => r.end));
  const wallMs = end - start;
  const sum = (f: (r: PhaseResult) => number) => results.reduce((s, r) => s + f(r), 0);
  return {
    op,
    operations: latencies.length,
    wallMs: round(wallMs, 3),
    opsPerSec: round(wallMs > 0 ? latencies.length / (wallMs / 1000) : 0, 1),
    p50Ms: round(percentile(latencies, 50) / 1000, 4),
    p95Ms: round(percentile(latencies, 95) / 1000, 4),
    p99Ms: round(percentile(latencies, 99) / 1000, 4),
    exists: sum((r) => r.exists),
    stale: sum((r) => r.stale),
    retries: sum((r) => r.retries),
  };
}

// ---------------------------------------------------------------------------------------------
// Listing: one worker, a location seeded with entries, each method timed in turn.

async function runLists(ctx: Context): Promise<void> {
  const { config } = ctx;
  if (config.listEntries <= 0 || config.listReps <= 0) return;
  const pool = await startPool(ctx, 1);
  try {
    for (const valueSize of config.listValueSizes) {
      for (const backend of config.backends) {
        await listBenchmark(ctx, pool, backend, valueSize);
      }
    }
  } finally {
    await pool.close();
  }
}

async function listBenchmark(
  ctx: Context,
  pool: WorkerPool,
  backend: Backend,
  valueSize: number,
): Promise<void> {
  const { config } = ctx;
  const methods = LIST_METHODS[backend];
  const location = await freshLocation(ctx, backend);
  try {
    progress(`list: seeding ${config.listEntries} ${backend} entries of ${valueSize} B`);
    const keys = Array.from(
      { length: config.listEntries },
      (_, i) => `entry-${String(i).padStart(4, "0")}`,
    );
    const seeder: TargetName = backend === "file" ? "file-raw" : "jetstream-raw";
    await pool.one(0, { cmd: "open", target: seeder, location });
    await pool.one(0, { cmd: "seed", keys, valueSize });
    const list = (method: ListMethod) =>
      pool.one<ListResult>(0, { cmd: "list", method, location, expect: keys.length });
    for (const method of methods) await list(method); // warm-up
    for (let rep = 0; rep < config.listReps; rep++) {
      for (const method of rotate(methods, rep)) {
        progress(`list: ${backend}, ${valueSize} B, rep ${rep + 1}/${config.listReps}, ${method}`);
        const r = await list(method);
        ctx.lists.push({
          backend,
          rep,
          method,
          ms: round(r.ms, 3),
          bytesRead: r.bytesRead,
          entries: r.entries,
          valueSize,
        });
      }
    }
  } finally {
    await dropLocation(ctx, location);
  }
}

// ---------------------------------------------------------------------------------------------
// Locations: a fresh directory or bucket per run.

async function freshLocation(ctx: Context, backend: Backend): Promise<Location> {
  const seq = ctx.seq++;
  if (backend === "file") {
    const dir = `${ctx.work}/run-${seq}`;
    await Deno.mkdir(dir, { recursive: true });
    return { dir };
  }
  const nc = requireNc(ctx);
  const bucket = `agentmem_bench_${ctx.runId}_${seq}`;
  await new Kvm(nc).create(bucket, { history: 1 });
  return { bucket };
}

async function dropLocation(ctx: Context, location: Location): Promise<void> {
  if (location.dir !== undefined) {
    await Deno.remove(location.dir, { recursive: true }).catch(() => {});
  }
  if (location.bucket !== undefined) {
    const kv = await new Kvm(requireNc(ctx)).open(location.bucket);
    await kv.destroy().catch(() => {});
  }
}

function requireNc(ctx: Context): NatsConnection {
  if (ctx.nc === undefined) throw new Error("No NATS connection");
  return ctx.nc;
}

// ---------------------------------------------------------------------------------------------
// Keys.

/** The keys worker `i` of `n` works on. Contended: every key, each worker from its own offset. */
export function viewKeys(keyspace: Keyspace, keys: number, n: number, i: number): string[] {
  if (keyspace === "disjoint") return Array.from({ length: keys }, (_, j) => `p${i}-k${j}`);
  const offset = Math.floor((i * keys) / n);
  return Array.from({ length: keys }, (_, j) => `k${(j + offset) % keys}`);
}

function allKeys(keyspace: Keyspace, keys: number, n: number): string[] {
  if (keyspace === "contended") return viewKeys(keyspace, keys, n, 0);
  return Array.from({ length: n }, (_, i) => viewKeys(keyspace, keys, n, i)).flat();
}

// ---------------------------------------------------------------------------------------------
// Small helpers.

function rotate<T>(items: readonly T[], by: number): T[] {
  const k = items.length === 0 ? 0 : by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

function hashSeed(trial: number, worker: number, op: string, section: string): number {
  let h = 2166136261 ^ (trial * 7919 + worker * 104729);
  for (const ch of `${op}/${section}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return h >>> 0;
}

function randomId(): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(4)),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

const TERMINAL = Deno.stderr.isTerminal();
const ENCODER = new TextEncoder();

function progress(text: string): void {
  if (!TERMINAL) return;
  const width = (() => {
    try {
      return Deno.consoleSize().columns;
    } catch {
      return 100;
    }
  })();
  Deno.stderr.writeSync(ENCODER.encode(`\r\x1b[K${text.slice(0, Math.max(10, width - 1))}`));
}

// Server URLs can carry credentials; the JSON never does.
function publicConfig(config: Config): Record<string, unknown> {
  const servers = config.servers?.map((s) => {
    try {
      const url = new URL(s.includes("://") ? s : `nats://${s}`);
      url.username = "";
      url.password = "";
      return url.toString();
    } catch {
      return "(unparsable)";
    }
  });
  return {
    ...config,
    mix: config.mixText,
    mixText: undefined,
    servers: servers ?? "private nats-server",
  };
}

if (import.meta.main) {
  let code: number;
  try {
    code = await main();
  } catch (e) {
    console.error(`\nBenchmark failed: ${e instanceof Error ? e.message : String(e)}`);
    code = 1;
  }
  Deno.exit(code);
}
