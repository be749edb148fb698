// `deno task bench`: the contention benchmark. Spawns worker processes (bench/worker.ts) that
// hammer one shared directory and one shared bucket, next to the floors run the same way, checks
// invariants as it goes, then runs the single-process measurements (bench/micro.ts) and the
// peers (bench/peers.ts), and reports per backend and operation. See `--help` and BENCH.md.

import { connect } from "@nats-io/transport-node";
import { requireTools, startNatsServer } from "../tests/harness.ts";
import { type Config, type Keyspace, opsPerPhase, parseConfig, USAGE } from "./_args.ts";
import { progress } from "./_format.ts";
import { checkPhase, COUNTER_KEY } from "./_invariants.ts";
import type { listOnce } from "./_list.ts";
import { freshLocations, openStore, seed } from "./_location.ts";
import { machineInfo } from "./_machine.ts";
import { startPool, type WorkerPool } from "./_pool.ts";
import type { Backend, ListMethod, Location, TargetName } from "./_protocol.ts";
import type { Results } from "./summarize.ts";
import { round } from "./_stats.ts";
import {
  type ListRecord,
  type RunRecord,
  slowNotes,
  summarize,
  summarizePhase,
} from "./summarize.ts";
import { runMicro } from "./micro.ts";
import { runPeers } from "./peers.ts";
import { renderText, writeBenchMd } from "./report.ts";
import type { PhaseResult } from "./worker.ts";

const LIST_METHODS: Record<Backend, ListMethod[]> = {
  file: ["file", "file-headers", "file-bodies"],
  jetstream: ["jetstream", "jetstream-watch", "jetstream-keys-get"],
};
const NO_NATS = "bench (or pass --servers, or --backend file --suites main,lists)";

/** Shared state of one benchmark invocation. */
type Context = Awaited<ReturnType<typeof setUp>>;

async function main(): Promise<number> {
  let config: Config | "help";
  try {
    config = parseConfig(Deno.args);
  } catch (e) {
    console.error(`${e instanceof Error ? e.message : e}\n\n${USAGE}`);
    return 2;
  }
  if (config === "help") {
    console.log(USAGE);
    return 0;
  }
  const [startedAt, t0, loadAtStart] = [new Date(), performance.now(), Deno.loadavg()[0] ?? 0];
  await using ctx = await setUp(config);
  const { suites, quick } = config;
  if (suites.includes("main")) await runMain(ctx);
  if (suites.includes("lists")) await runLists(ctx);
  const trials = quick ? 1 : config.trials;
  const micro = await suite(
    ctx,
    "micro",
    () => runMicro({ ...ctx, quick, trials, backends: config.backends }),
  );
  const peerTrials = Math.min(3, trials);
  const peers = await suite(ctx, "peers", () => runPeers({ ...ctx, quick, trials: peerTrials }));
  progress("");
  const machine = await machineInfo(ctx.nc?.info?.version);
  const loadAtEnd = machine.loadAverage[0] ?? 0;
  const notes = Math.max(loadAtStart, loadAtEnd) < machine.cores / 2 ? [] : [
    `The machine was not idle: the 1-minute load average was ${loadAtStart.toFixed(1)} when ` +
    `the run started and ${loadAtEnd.toFixed(1)} when it ended, on ${machine.cores} cores. ` +
    "Ratios hold up better than absolute numbers; rerun on a quiet machine for the record.",
  ];
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
    notes: [...notes, ...slowNotes(ctx.runs), ...micro?.notes ?? [], ...peers?.notes ?? []],
    summary: summarize(ctx.runs, ctx.lists, micro),
    micro,
    peers,
  };
  console.log(renderText(results));
  const json = JSON.stringify(results, null, 2) + "\n";
  if (config.json !== undefined) await Deno.writeTextFile(config.json, json);
  if (config.writeBenchMd) {
    await Deno.writeTextFile(new URL("./results.json", import.meta.url), json);
    await writeBenchMd(results);
    console.error("Wrote BENCH.md and bench/results.json");
  }
  const broken = ctx.violations.map((v) => `  - ${v}`).join("\n");
  const n = ctx.violations.length;
  if (n > 0) console.error(`\n!!! ${n} INVARIANT(S) BROKEN !!!\n${broken}\n`);
  const missed = config.strict && results.summary.targets.some((t) => t.met === false);
  if (missed) console.error("Some speed targets were missed (--strict)");
  return n > 0 || missed ? 1 : 0;
}

// A scratch directory, NATS when a suite needs it (micro and peers measure jetstream whatever
// --backend says), the warm-up location; all removed on dispose, or on SIGINT.
async function setUp(config: Config) {
  const { backends, suites, dir } = config;
  const work = await Deno.makeTempDir({ prefix: "agentmem-bench-", ...dir ? { dir } : {} });
  const needsNats = backends.includes("jetstream") ||
    suites.some((s) => s !== "main" && s !== "lists");
  const own = needsNats && config.servers === undefined;
  if (own) requireTools(NO_NATS, "nats-server");
  if (own) progress("starting a private nats-server");
  const server = own ? await startNatsServer() : undefined;
  const servers = server === undefined ? config.servers ?? [] : [server.url];
  const name = "agentmem-bench-driver";
  const nc = needsNats ? await connect({ servers: [...servers], name }) : undefined;
  const runId = crypto.randomUUID().slice(0, 8);
  const locations = freshLocations(work, nc, `agentmem_bench_${runId}`);
  const warmup = await locations.fresh(nc === undefined ? "file" : undefined);
  const dispose = async () => {
    await warmup[Symbol.asyncDispose]();
    await nc?.close().catch(() => {});
    await server?.stop().catch(() => {});
    await Deno.remove(work, { recursive: true }).catch(() => {});
  };
  const onSignal = () => void dispose().finally(() => Deno.exit(130));
  Deno.addSignalListener("SIGINT", onSignal);
  const [runs, lists, violations]: [RunRecord[], ListRecord[], string[]] = [[], [], []];
  const close = () => dispose().finally(() => Deno.removeSignalListener("SIGINT", onSignal));
  const shared = { config, work, nc, servers, locations, warmup: warmup as Location, checks: 0 };
  return { ...shared, runs, lists, violations, [Symbol.asyncDispose]: close };
}

// Runs micro or peers if asked for. A suite that fails leaves the rest of the run worth writing
// out; the exit status says it failed.
async function suite<T>(ctx: Context, name: "micro" | "peers", run: () => Promise<T>) {
  if (!ctx.config.suites.includes(name)) return undefined;
  progress(name === "micro" ? "micro: exists, capacity, history, in flight" : "peers");
  const failed = (e: unknown) => {
    const why = e instanceof Error ? e.message : String(e);
    ctx.violations.push(`bench/${name}.ts failed (${why}); its tables are missing`);
    return undefined;
  };
  return await run().catch(failed);
}

function workers(ctx: Context, size: number): Promise<WorkerPool> {
  progress(`starting ${size} worker processes`);
  const { servers, config: { valueSize, warmup: warmupOps }, warmup } = ctx;
  const init = { servers, valueSize, warmupOps, warmup };
  return startPool(size, (index) => ({ cmd: "init", index, ...init }));
}

// Main runs: every target of every backend, per keyspace, repeated and alternated.
async function runMain(ctx: Context): Promise<void> {
  const { trials, keyspaces, backends, processes } = ctx.config;
  await using pool = await workers(ctx, processes);
  for (let trial = 0; trial < trials; trial++) {
    for (const keyspace of keyspaces) {
      for (const backend of backends) {
        for (const target of rotate<TargetName>([backend, `${backend}-raw`], trial)) {
          const about = `${keyspace}, ${target}, ${processes} processes`;
          progress(`main: trial ${trial + 1}/${trials}, ${about}`);
          ctx.runs.push(await runOnce(ctx, pool, { trial, keyspace, backend, target }));
        }
      }
    }
  }
}

type Run = { trial: number; keyspace: Keyspace; backend: Backend; target: TargetName };

/** One run: a fresh location, every phase of the mix the target supports, invariants checked. */
async function runOnce(ctx: Context, pool: WorkerPool, run: Run): Promise<RunRecord> {
  const { trial, keyspace, backend, target } = run;
  const { keys, mix, valueSize } = ctx.config;
  const processes = pool.size;
  const views = Array.from({ length: processes }, (_, i) => view(keyspace, keys, processes, i));
  const all = keyspace === "contended" ? views[0] as string[] : views.flat();
  const where = `main trial ${trial + 1} ${keyspace} ${target} (${processes} processes)`;
  const phases = [];
  await using location = await ctx.locations.fresh(backend);
  await pool.each(() => ({ cmd: "open", target, location }));
  // The invariants read what the run left behind through the library, whichever target wrote it.
  const store = await openStore(location, ctx.nc);
  let created = false;
  for (const { op } of mix) {
    // Only the revision-checked jetstream targets run the counter without losing increments.
    if (op === "counter" && backend === "file") continue;
    // Without a create phase, the keys are seeded untimed.
    if (op === "counter") await seed(location, [COUNTER_KEY], "0", ctx.nc);
    else if (op !== "create" && !created) await seed(location, all, "s".repeat(valueSize), ctx.nc);
    created ||= op !== "counter";
    const count = opsPerPhase(ctx.config, op);
    const results = await pool.each<PhaseResult>((i) => {
      const mine = op === "counter" ? [COUNTER_KEY] : views[i] as string[];
      // Each worker, trial and phase draws its own keys.
      const seed = ((trial * 64 + i) * 8 + mix.findIndex((m) => m.op === op)) * 7919;
      return { cmd: "phase", op, keys: mine, count, seed };
    });
    phases.push(summarizePhase(op, results));
    await checkPhase(ctx, where, { op, results, all }, store);
  }
  return { section: "main", ...run, processes, phases };
}

// Listing: one worker, a location seeded with entries, each method timed in turn.
async function runLists(ctx: Context): Promise<void> {
  const { listEntries, listReps, listValueSizes, backends } = ctx.config;
  if (listEntries <= 0 || listReps <= 0) return;
  await using pool = await workers(ctx, 1);
  const keys = Array.from({ length: listEntries }, (_, i) => `entry-${String(i).padStart(4, "0")}`);
  type Listed = Awaited<ReturnType<typeof listOnce>>;
  for (const valueSize of listValueSizes) {
    for (const backend of backends) {
      await using location = await ctx.locations.fresh(backend);
      progress(`list: seeding ${listEntries} ${backend} entries of ${valueSize} B`);
      await seed(location, keys, "s".repeat(valueSize), ctx.nc);
      const list = (method: ListMethod) =>
        pool.one<Listed>(0, { cmd: "list", method, location, expect: keys.length });
      for (const method of LIST_METHODS[backend]) await list(method); // warm-up
      for (let rep = 0; rep < listReps; rep++) {
        for (const method of rotate(LIST_METHODS[backend], rep)) {
          progress(`list: ${backend}, ${valueSize} B, rep ${rep + 1}/${listReps}, ${method}`);
          const { ms, bytesRead, entries } = await list(method);
          ctx.lists.push({ backend, rep, method, ms: round(ms, 3), bytesRead, entries, valueSize });
        }
      }
    }
  }
}

/** The keys worker `i` of `n` works on. Contended: every key, each worker from its own offset. */
function view(keyspace: Keyspace, keys: number, n: number, i: number): string[] {
  const offset = Math.floor((i * keys) / n);
  const key = (j: number) => keyspace === "disjoint" ? `p${i}-k${j}` : `k${(j + offset) % keys}`;
  return Array.from({ length: keys }, (_, j) => key(j));
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

// Server URLs can carry credentials; the JSON never does.
function publicConfig(config: Config): Record<string, unknown> {
  const servers = config.servers?.map((s) => s.replace(/^([a-z]+:\/\/)?[^@/]*@/, "$1"));
  const { mixText, ...rest } = config;
  return { ...rest, mix: mixText, servers: servers ?? "private nats-server" };
}

if (import.meta.main) {
  const code = await main().catch((e) => {
    console.error(`\nBenchmark failed: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  });
  Deno.exit(code);
}
