// `deno task powercut`: the file backend on a simulated power cut. Workloads in separate processes
// write to a file store inside the power-cut file system (pcfs.py); at seeded random points the
// workers are SIGKILLed and the power is cut; after the remount every acknowledged write must be
// there with its exact bytes, nothing torn, list()/read()/auditStore/`agentmem check` agreeing,
// and a write to every key must go through. The last line is
// `powercut: N cuts, N acknowledged, N lost, N torn`; exit status 1 on any loss or other failure,
// 2 when a tool is missing. Its options (--cuts, --seed, --keep-share, --skip-fsync, --examples,
// and --nats, which measures nats-server instead): tests/powercut/README.md.

import { requireTools } from "../_lib/needs.ts";
import {
  GROUPS,
  passed,
  type PowercutResult,
  runPowercut,
  summaryLine,
  type Tally,
} from "./run.ts";
import { shimEnv } from "./_shim.ts";
import { NATS_SETUPS, runNatsPowercut, setupName } from "./nats.ts";

/** The report of a run, one line each; the last is the summary line. */
export function reportLines(seed: number, r: PowercutResult): string[] {
  return [
    `powercut: seed ${seed}; the file system synced ${r.fs.syncs} files and ${r.fs.dirsyncs} directories; cuts kept ${r.fs.kept} unsynced files or directories whole${
      r.fs.stuck > 0 ? `; ${r.fs.stuck} cuts killed a daemon that did not answer` : ""
    }`,
    `powercut: durable writes lost: ${lostBy(r.durable)}`,
    `powercut: history: ${r.durable.history} keys whose history and head disagree, ${r.historyMissing} whose versions are not their acknowledged writes`,
    `powercut: durable: false (atomic, not durable): ${r.nonDurable.acknowledged} acknowledged, ${r.nonDurable.lost} lost (allowed), ${r.nonDurable.torn} torn, ${r.nonDurable.history} keys whose history and head disagree`,
    `powercut: after the remounts: ${r.unknown} states no write left, ${r.strangers} names no write made, ${r.disagreements} disagreements of list/read/audit/check, ${r.blocked} writes that could not get through, ${r.leftovers} temp files and locks left (invisible), slowest write ${
      Math.round(r.slowestWriteMs)
    } ms`,
    `powercut: per cut: ${
      Object.entries(r.phaseMs).map(([k, ms]) => `${k} ${Math.round(ms / Math.max(1, r.cuts))} ms`)
        .join(", ")
    }`,
    ...r.errors.map((e) => `powercut: ERROR ${e}`),
    ...r.examples.map((e) => `powercut:   ${e}`),
    summaryLine(r),
  ];
}

function lostBy(t: Tally): string {
  return `${t.lostBy.create} creates, ${t.lostBy.update} updates, ${t.lostBy.delete} deletes`;
}

function flag(name: string): string | undefined {
  const i = Deno.args.indexOf(`--${name}`);
  if (i >= 0) return Deno.args[i + 1];
  return Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

async function natsCli(seed: number, cuts: number): Promise<number> {
  requireTools("powercut", "fuse", "nats-server 2.9.10", "nats-server 2.10.27");
  console.log(`powercut: nats-server, seed ${seed}, ${cuts} cuts per setup`);
  let failed = false;
  const lines: string[] = [];
  for (const setup of NATS_SETUPS) {
    const r = await runNatsPowercut(setup, cuts, seed);
    for (const e of r.errors) console.log(`powercut: ${setupName(setup)}: ERROR ${e}`);
    for (const e of r.examples.slice(0, 5)) console.log(`powercut:   ${setupName(setup)}: ${e}`);
    failed ||= r.errors.length > 0;
    const most = Math.max(0, ...r.lostPerCut);
    const hit = r.lostPerCut.filter((n) => n > 0).length;
    lines.push(
      `powercut: ${
        setupName(setup)
      }: ${r.cuts} cuts, ${r.acknowledged} acknowledged, ${r.lost} lost (${
        (r.lost / Math.max(1, r.cuts)).toFixed(1)
      } per cut, at most ${most}; ${hit} of ${r.cuts} cuts lost some), ${r.torn} torn`,
    );
  }
  for (const line of lines) console.log(line);
  return failed ? 1 : 0;
}

if (import.meta.main) {
  requireTools("powercut", "fuse");
  if (Deno.args.includes("--nats")) {
    const seed = Number(flag("seed") ?? Math.floor(Math.random() * 1e9));
    Deno.exit(await natsCli(seed, Number(flag("cuts") ?? 20)));
  }
  const seed = Number(flag("seed") ?? Math.floor(Math.random() * 1e9));
  const cuts = Number(flag("cuts") ?? 500);
  const keepShare = flag("keep-share") === undefined ? undefined : Number(flag("keep-share"));
  const examples = flag("examples") === undefined ? undefined : Number(flag("examples"));
  if (!Number.isInteger(cuts) || cuts < 1 || !Number.isInteger(seed)) {
    console.error("powercut: --cuts takes a positive integer, --seed an integer");
    Deno.exit(2);
  }
  const skip = flag("skip-fsync");
  if (skip !== undefined && skip !== "dirs" && skip !== "files") {
    console.error("powercut: --skip-fsync takes dirs or files");
    Deno.exit(2);
  }
  if (skip !== undefined) requireTools("powercut", "gcc");
  console.log(
    `powercut: seed ${seed}, ${cuts} cuts${skip ? `, the workers' fsyncs of ${skip} skipped` : ""}`,
  );
  // Ctrl-C ends the run after the round in progress, with the report of the cuts made.
  const stop = new AbortController();
  for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(sig, () => stop.abort());
  const r = await runPowercut({
    cuts,
    seed,
    signal: stop.signal,
    ...(keepShare === undefined ? {} : { keepShare }),
    ...(examples === undefined ? {} : { examples }),
    // Under the shim only the durable workloads run: they are the ones whose syncs it breaks.
    ...(skip === undefined
      ? {}
      : { workerEnv: await shimEnv(skip), groups: GROUPS.filter((g) => g.durable) }),
  });
  for (const line of reportLines(seed, r)) console.log(line);
  Deno.exit(passed(r) ? 0 : 1);
}
