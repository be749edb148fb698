// `deno task nemesis`: a Jepsen-style run of the jetstream backend on a 3-node nats-server cluster
// whose nodes live in network namespaces. Creates the namespaces, runs tests/nemesis/run.ts in the
// hub namespace, removes every namespace (also on failure and on Ctrl-C) and prints a summary
// whose last line is `nemesis: N ops, N indeterminate, N lost, N duplicated, N hung`.
//
//   deno task nemesis [--seed N] [--duration SECONDS] [--server-version 2.10.27|2.9.10]
//                     [--nats-bin PATH] [--clients N] [--replicas N] [--timeout MS]
//                     [--sync-always] [--raw] [--keep DIR]
//
// --raw makes the clients use raw @nats-io/kv calls instead of the library, for setups the library
// refuses (a replicated bucket on nats-server 2.9.10): it measures the server alone.

import { historyLine, passed, summaryLine, type Verdict } from "./checker.ts";
import { createNamespaces, inNamespace, type Namespaces } from "./netns.ts";
import { requireTools } from "../_lib/needs.ts";
import { denoEnv, denoRunArgs } from "../_lib/deno_child.ts";
import { spawnChild } from "../_lib/spawn.ts";
import type { Schedule } from "./nemesis.ts";
import type { RunArgs, RunSummary } from "./run.ts";
import { serverBinary } from "./servers.ts";

/** What a run takes. */
export interface NemesisOptions {
  readonly seed: number;
  readonly durationMs: number;
  readonly bin: string;
  readonly clients?: number;
  readonly replicas?: number;
  readonly timeout?: number;
  readonly marginMs?: number;
  readonly syncAlways?: boolean;
  readonly schedule?: Schedule;
  /** Stop after this many rounds of every fault (a bounded run for tests). */
  readonly rounds?: number;
  /** Raw kv calls instead of the library (where the library refuses the bucket). */
  readonly raw?: boolean;
  /** Keep the history here instead of a temp directory that is removed. */
  readonly keep?: string;
  readonly log?: (line: string) => void;
}

/** What a run found. */
export interface NemesisResult {
  readonly verdict: Verdict;
  readonly faults: readonly string[];
  readonly error?: string;
  /** The summary, last line `nemesis: N ops, ...`. */
  readonly lines: readonly string[];
}

const LONG: Schedule = { holdMs: [3_000, 10_000], healMs: [3_000, 8_000] };

/** Runs the nemesis once; removes every namespace it made whatever happens. Needs root. */
export async function runNemesisCluster(o: NemesisOptions): Promise<NemesisResult> {
  const log = o.log ?? ((l: string) => console.log(l));
  const dir = o.keep ?? await Deno.makeTempDir({ prefix: "agentmem-nemesis-" });
  await Deno.mkdir(dir, { recursive: true });
  // A history appends: a directory from an earlier run would mix two runs (and reuse its stores).
  for await (const _ of Deno.readDir(dir)) {
    if (o.keep) throw new Error(`--keep ${dir}: the directory is not empty`);
  }
  let ns: Namespaces | undefined;
  const onSignal = () => {
    (ns?.remove() ?? Promise.resolve()).finally(() => Deno.exit(130));
  };
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  try {
    ns = await createNamespaces(3);
    const args: RunArgs = {
      seed: o.seed,
      durationMs: o.durationMs,
      bin: o.bin,
      nodes: ns.nodes,
      dir,
      clients: o.clients ?? 6,
      replicas: o.replicas ?? 3,
      timeout: o.timeout ?? 2_000,
      marginMs: o.marginMs ?? 2_000,
      syncAlways: o.syncAlways ?? false,
      schedule: o.schedule ?? LONG,
      ...(o.rounds === undefined ? {} : { rounds: o.rounds }),
      raw: o.raw ?? false,
    };
    const [cmd, cmdArgs] = inNamespace(ns.hub, Deno.execPath(), [
      ...denoRunArgs(),
      "--allow-all",
      new URL("./run.ts", import.meta.url).pathname,
      JSON.stringify(args),
    ]);
    // Bounded: the run ends by itself well within this; past it, it is killed.
    await using child = spawnChild(cmd, cmdArgs, {
      name: "nemesis run.ts",
      env: denoEnv(),
      echo: log,
      timeLimitMs: o.durationMs + 300_000,
    });
    // Fails only at the time limit; the missing summary below says so.
    await child.finished().catch(() => {});
    const text = await Deno.readTextFile(`${dir}/summary.json`).catch(() => undefined);
    if (text === undefined) {
      throw new Error(
        `the run wrote no summary: it failed or was killed at its time bound (${
          (o.durationMs + 300_000) / 1000
        } s); check the kept history with tests/nemesis/check_history.ts`,
      );
    }
    const summary = JSON.parse(text) as RunSummary;
    const v = summary.verdict;
    const counts = new Map<string, number>();
    for (const f of summary.faults) counts.set(f, (counts.get(f) ?? 0) + 1);
    const lines = [
      `nemesis: seed ${o.seed}, ${args.clients} clients (${
        args.raw ? "raw kv calls" : "the library"
      }), R${args.replicas}, ${
        o.rounds === undefined ? `${o.durationMs / 1000} s` : `${o.rounds} round(s) of faults`
      }, deadline ${args.timeout} ms (+${args.marginMs} ms margin), history ${
        o.keep ? dir : "(removed)"
      }`,
      `nemesis: faults ${[...counts].map(([f, n]) => `${f} x${n}`).join(", ") || "none"}`,
      `nemesis: failed reads ${v.failedReads}, typed refusals ${v.refused}, stale reads ${v.staleReads}, resurrected ${v.resurrected}, phantom ${v.phantom}, untyped ${v.untyped}, slowest call ${v.slowestMs} ms`,
      ...v.examples.map((e) => `nemesis:   ${e}`),
      ...(summary.error ? [`nemesis: RUN ERROR: ${summary.error}`] : []),
      ...(args.raw ? [] : [historyLine(v)]),
      summaryLine(v),
    ];
    return {
      verdict: v,
      faults: summary.faults,
      lines,
      ...(summary.error ? { error: summary.error } : {}),
    };
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onSignal);
    await ns?.remove();
    if (!o.keep) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

function flag(name: string): string | undefined {
  const i = Deno.args.indexOf(`--${name}`);
  if (i >= 0) return Deno.args[i + 1];
  const eq = Deno.args.find((a) => a.startsWith(`--${name}=`));
  return eq?.slice(name.length + 3);
}

async function cli(): Promise<number> {
  const version = flag("server-version") ?? "2.10.27";
  const bin = flag("nats-bin") ?? serverBinary(version);
  requireTools("nemesis", "root", "ip", "nft");
  if (bin === undefined) {
    console.error(
      `nemesis: cannot run: nats-server ${version} is missing (${
        version === "2.10.27" ? ".ci/nats-2.10.sh fetches it" : "apt-get install -y nats-server"
      }; or pass --nats-bin)`,
    );
    return 2;
  }
  const seed = Number(flag("seed") ?? Math.floor(Math.random() * 1e9));
  const num = (name: string) => flag(name) === undefined ? undefined : Number(flag(name));
  const keep = flag("keep");
  const r = await runNemesisCluster({
    seed,
    durationMs: (num("duration") ?? 600) * 1000,
    bin,
    syncAlways: Deno.args.includes("--sync-always"),
    raw: Deno.args.includes("--raw"),
    ...(num("clients") === undefined ? {} : { clients: num("clients") as number }),
    ...(num("replicas") === undefined ? {} : { replicas: num("replicas") as number }),
    ...(num("timeout") === undefined ? {} : { timeout: num("timeout") as number }),
    ...(keep === undefined ? {} : { keep }),
  });
  console.log(`nemesis: nats-server ${version} (${bin})`);
  for (const line of r.lines) console.log(line);
  return passed(r.verdict) && r.error === undefined ? 0 : 1;
}

if (import.meta.main) Deno.exit(await cli());
