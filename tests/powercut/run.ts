// The power-cut run: workloads in separate processes on a file store inside the power-cut file
// system; at a seeded random point the workers are SIGKILLed and the power is cut; after the
// remount every key is checked against what was acknowledged, then written once more (so a lock
// or temp file that would block a later write shows), and the next round starts.

import { CorruptError, openFileStore, Scope, type Store, UnavailableError } from "../../mod.ts";
import { spawnDeno } from "../_lib/spawn.ts";
import { Rng } from "../_lib/rng.ts";
import { entryFor, HISTORY } from "./_content.ts";
import { applyLine, type Group, judge, KeyModel, type WriteKind } from "./_model.ts";
import { observe } from "./_observe.ts";
import { type CutOptions, PowerCutFs } from "./_pcfs.ts";
import type { WorkerJob } from "./_worker.ts";
import { checkHistory } from "./_history.ts";

const WORKER = new URL("./_worker.ts", import.meta.url).pathname;
// A round lasts seconds; a worker alive this long is stuck (its wait fails, naming it).
const WORKER_TIME_LIMIT_MS = 120_000;
/** A write after the remount that takes longer than this is blocked by something left behind. */
const WRITE_DEADLINE_MS = 2_000;

/** The default workloads: durable without and with read-before-update, and `durable: false`. */
export const GROUPS: readonly Group[] = [
  { name: "d", durable: true, readBeforeUpdate: false },
  { name: "r", durable: true, readBeforeUpdate: true },
  { name: "n", durable: false, readBeforeUpdate: false },
];

/** What a run takes. */
export interface PowercutOptions {
  readonly cuts: number;
  readonly seed: number;
  readonly groups?: readonly Group[];
  /** Worker processes (default 2). */
  readonly processes?: number;
  /** Lanes (concurrent writers) of each workload, spread over the processes, and keys per lane. */
  readonly lanes?: number;
  readonly keysPerLane?: number;
  /** The share of cuts that keep a seeded part of the unsynced state (default 0.3). */
  readonly keepShare?: number;
  /** Runs `agentmem check` as a process every this many cuts, and after the last (default 25). */
  readonly cliEvery?: number;
  /** Ends the run after the round in progress (Ctrl-C): the report covers the cuts made. */
  readonly signal?: AbortSignal;
  /** Examples kept of each kind of problem (default 4). */
  readonly examples?: number;
  /** Extra environment for the workers (an LD_PRELOAD shim). */
  readonly workerEnv?: Record<string, string>;
  readonly log?: (line: string) => void;
}

/** Counts for one kind of workload. */
export interface Tally {
  acknowledged: number;
  lost: number;
  torn: number;
  /** History and head disagree, or a version does not read back whole (keys, per cut). */
  history: number;
  /** The lost writes by kind. */
  readonly lostBy: Record<WriteKind, number>;
}

function tally(): Tally {
  return {
    acknowledged: 0,
    lost: 0,
    torn: 0,
    history: 0,
    lostBy: { create: 0, update: 0, delete: 0 },
  };
}

/** What a run found. */
export interface PowercutResult {
  readonly cuts: number;
  /** The durable workloads: every acknowledged write must survive. */
  readonly durable: Tally;
  /** `durable: false`: atomic, not durable; losses are expected, torn entries are not. */
  readonly nonDurable: Tally;
  /**
   * States no write made, names no write made, and writes that could not get through (after the
   * remount, or in a workload): a lock or a damaged version left behind.
   */
  readonly unknown: number;
  readonly strangers: number;
  readonly blocked: number;
  readonly disagreements: number;
  /** Keys of durable workloads whose versions are not exactly their acknowledged writes. */
  readonly historyMissing: number;
  readonly leftovers: number;
  readonly slowestWriteMs: number;
  /** Milliseconds spent in each phase of the rounds, summed: writing, cutting, checking, rewriting. */
  readonly phaseMs: {
    readonly write: number;
    readonly cut: number;
    readonly check: number;
    readonly rewrite: number;
  };
  readonly errors: readonly string[];
  readonly examples: readonly string[];
  /** What the file system did: syncs, what cuts kept, cuts where it had to be killed. */
  readonly fs: {
    readonly syncs: number;
    readonly dirsyncs: number;
    readonly kept: number;
    readonly stuck: number;
  };
}

/** The last line of a run's report. */
export function summaryLine(r: PowercutResult): string {
  return `powercut: ${r.cuts} cuts, ${r.durable.acknowledged} acknowledged, ${r.durable.lost} lost, ${r.durable.torn} torn`;
}

/**
 * Whether a run found nothing wrong. `durable: false` may lose writes, and with them versions (a
 * head whose versions a cut lost no longer chains to what history kept): reported, not wrong; a
 * torn entry is wrong for every store.
 */
export function passed(r: PowercutResult): boolean {
  return r.durable.lost === 0 && r.durable.torn === 0 && r.durable.history === 0 &&
    r.nonDurable.torn === 0 && r.historyMissing === 0 &&
    r.unknown === 0 && r.strangers === 0 && r.blocked === 0 && r.disagreements === 0 &&
    r.errors.length === 0;
}

/** Runs `o.cuts` rounds on a new power-cut file system, and stops it. */
export async function runPowercut(o: PowercutOptions): Promise<PowercutResult> {
  const log = o.log ?? ((l: string) => console.log(l));
  const groups = o.groups ?? GROUPS;
  const lanes = o.lanes ?? 2;
  const processes = Math.min(o.processes ?? 2, lanes);
  const perLane = o.keysPerLane ?? 2;
  const rng = new Rng(o.seed);
  const keys = new Map<string, KeyModel>();
  for (const g of groups) {
    for (let l = 0; l < lanes; l++) {
      for (let i = 0; i < perLane; i++) {
        const key = `${g.name}${l}-${i}`;
        keys.set(key, new KeyModel(key, g, null));
      }
    }
  }
  const durable = tally();
  const nonDurable = tally();
  const errors: string[] = [];
  // A few examples of each kind of problem, for the report.
  const noted = new Map<string, string[]>();
  const note = (kind: string, line: string) => {
    const list = noted.get(kind) ?? [];
    noted.set(kind, list);
    if (list.length < (o.examples ?? 4)) list.push(line);
  };
  let unknown = 0, strangers = 0, blocked = 0, disagreements = 0, leftovers = 0, slowest = 0;
  let historyMissing = 0;
  let syncs = 0, dirsyncs = 0, kept = 0;
  const phaseMs = { write: 0, cut: 0, check: 0, rewrite: 0 };
  await using pc = await PowerCutFs.start();
  const dir = `${pc.mount}/store`;
  await Deno.mkdir(dir);
  await pc.remount(); // the store's directory is there for good
  await rewrite(dir, keys, (ms) => (slowest = Math.max(slowest, ms)));
  for (let cut = 1; cut <= o.cuts && errors.length === 0 && !o.signal?.aborted; cut++) {
    const target = rng.int(0, 40);
    const extraMs = rng.int(0, 20);
    const cutOpts: CutOptions = rng.next() < (o.keepShare ?? 0.3)
      ? { keep: rng.pick([0.25, 0.5, 0.75]), seed: rng.int(0, 2 ** 31) }
      : {};
    let t0 = performance.now();
    const lap = (phase: keyof typeof phaseMs) => {
      const t = performance.now();
      phaseMs[phase] += t - t0;
      t0 = t;
    };
    const workers = Array.from({ length: processes }, (_, p) =>
      spawnWorker(
        dir,
        groups,
        keys,
        Array.from({ length: lanes }, (_, l) => l).filter((l) => l % processes === p),
        o.seed + cut * 7 + p,
        o.workerEnv,
      ));
    // The cut point: after `target` acknowledged durable writes in this round (or 15 s), then a
    // few ms more.
    const giveUp = Date.now() + 15_000;
    while (workers.reduce((n, w) => n + w.acks(), 0) < target && Date.now() < giveUp) {
      if (workers.every((w) => w.exited)) break;
      await new Promise((r) => setTimeout(r, 1));
    }
    if (extraMs > 0) await new Promise((r) => setTimeout(r, extraMs));
    for (const w of workers) w.kill();
    lap("write");
    const stats = await pc.cut(cutOpts);
    lap("cut");
    syncs += stats.syncs;
    dirsyncs += stats.dirsyncs;
    kept += (stats.kept_files ?? 0) + (stats.kept_dirs ?? 0);
    for (const w of workers) {
      for (const line of await w.lines()) {
        const problem = applyLine(keys, line);
        if (problem !== undefined && "error" in problem) {
          errors.push(`cut ${cut}: ${problem.error}`);
        } else if (problem !== undefined) {
          blocked++;
          note("blocked", `cut ${cut}: a workload's write failed: ${problem.blocked}`);
        } else if (line.startsWith("A ")) {
          const k = keys.get(line.slice(2))!;
          (k.group.durable ? durable : nonDurable).acknowledged++;
        }
      }
    }
    // After the remount: what every key holds, four ways.
    const store = await openFileStore({ dir, history: HISTORY });
    const seen = await observe(
      store,
      dir,
      [...keys.keys()],
      cut % (o.cliEvery ?? 25) === 0 || cut === o.cuts,
    );
    leftovers += seen.leftovers;
    for (const s of seen.strangers) note("stranger", `cut ${cut}: a name no write made: ${s}`);
    strangers += seen.strangers.length;
    for (const d of seen.disagreements) note("disagree", `cut ${cut}: ${d}`);
    disagreements += seen.disagreements.length;
    for (const [key, f] of seen.keys) {
      const k = keys.get(key)!;
      const t = k.group.durable ? durable : nonDurable;
      if ("torn" in f) {
        t.torn++;
        note(
          k.group.durable ? "torn" : "torn, durable: false",
          `cut ${cut}: ${key} is torn: ${f.torn}`,
        );
        continue;
      }
      const v = judge(k, f.value);
      for (const kind of v.lostKinds) t.lostBy[kind]++;
      if (v.lost > 0) {
        t.lost += v.lost;
        if (k.group.durable) {
          note(
            "lost",
            `cut ${cut}: ${key} lost ${v.lostKinds.join(", ")}: holds ${
              show(f.value)
            }, acknowledged ${show(k.acked)}`,
          );
        }
      }
      if (v.unknown) {
        unknown++;
        note(
          "unknown",
          `cut ${cut}: ${key} holds ${show(f.value)}, which no write of its round left`,
        );
      }
    }
    const h = await checkHistory(store, keys.values(), seen.keys);
    // One count per key and cut, whatever the number of its problems.
    const disagreeing = new Set([...seen.historyProblems, ...h.disagree].map((p) => p.key));
    for (const p of [...seen.historyProblems, ...h.disagree]) {
      const durableKey = keys.get(p.key)?.group.durable ?? true;
      note(durableKey ? "history" : "history, durable: false", `cut ${cut}: ${p.key}: ${p.text}`);
    }
    for (const key of disagreeing) {
      (keys.get(key)?.group.durable ?? true ? durable : nonDurable).history++;
    }
    for (const p of h.missing) note("history missing", `cut ${cut}: ${p.key}: ${p.text}`);
    historyMissing += h.missing.length;
    // Every key written once more: nothing left behind may block it.
    lap("check");
    const b = await rewrite(dir, keys, (ms) => (slowest = Math.max(slowest, ms)), seen.keys);
    lap("rewrite");
    for (const line of b) note("blocked", `cut ${cut}: ${line}`);
    blocked += b.length;
    if (cut % 25 === 0 || cut === o.cuts) {
      log(
        `powercut: ${cut}/${o.cuts} cuts, durable ${durable.acknowledged} acknowledged, ${durable.lost} lost, ${durable.torn} torn; durable:false ${nonDurable.acknowledged} acknowledged, ${nonDurable.lost} lost, ${nonDurable.torn} torn`,
      );
    }
  }
  const final = await pc.stats();
  const cuts = Math.min(o.cuts, final.cuts);
  if (final.crashes > 0) errors.push(`the file system's daemon crashed ${final.crashes} times`);
  return {
    cuts,
    durable,
    nonDurable,
    unknown,
    strangers,
    blocked,
    disagreements,
    historyMissing,
    leftovers,
    slowestWriteMs: slowest,
    phaseMs,
    errors,
    examples: [...noted.values()].flat(),
    fs: { syncs, dirsyncs, kept, stuck: final.stuck },
  };
}

function show(v: number | null): string {
  return v === null ? "nothing" : `version ${v}`;
}

// Writes a new version of every key from this process, durably, and starts the next round from
// it. A key that is torn is deleted first. Returns what could not be written in time.
async function rewrite(
  dir: string,
  keys: Map<string, KeyModel>,
  timed: (ms: number) => void,
  seen?: Map<string, { value: number | null } | { torn: string }>,
): Promise<string[]> {
  const plain = await openFileStore({ dir, history: HISTORY });
  const checked = await openFileStore({ dir, readBeforeUpdate: true, history: HISTORY });
  const problems: string[] = [];
  // All at once, as writers in one process share directory flushes.
  await Promise.all([...keys.values()].map(async (k) => {
    const f = seen?.get(k.key);
    const version = k.next++;
    const { description, content } = entryFor(k.key, version);
    const signal = AbortSignal.timeout(WRITE_DEADLINE_MS);
    const t0 = performance.now();
    try {
      await write(dir, k, f, plain, checked, description, content, signal);
      k.reset(version);
    } catch (e) {
      problems.push(
        `a write of ${k.key} after the remount failed: ${e instanceof Error ? e.message : e}${
          lockNote(dir, k.key)
        }`,
      );
      if (e instanceof CorruptError) {
        // Damage left by a cut (a version that cannot be read) makes the key unwritable until an
        // operator removes it: so does the run, so the key is written again in the next rounds.
        await Deno.remove(`${dir}/.history/${k.key}`, { recursive: true }).catch(() => {});
        await Deno.remove(`${dir}/${k.key}.md`).catch(() => {});
        await plain.create(k.key, description, content);
        k.reset(version);
      } else if (e instanceof UnavailableError && removeEmptyLock(dir, k.key)) {
        // A lock a cut left empty (its name synced, its content not), which the library refuses
        // until an operator removes it: so does the run, so the next rounds write the key again.
        const again = AbortSignal.timeout(WRITE_DEADLINE_MS);
        await write(dir, k, f, plain, checked, description, content, again);
        k.reset(version);
      } else k.reset(f !== undefined && "value" in f ? f.value : null);
    }
    timed(performance.now() - t0);
  }));
  return problems;
}

// Removes the key's lock file when it is an empty file; true when it did.
function removeEmptyLock(dir: string, key: string): boolean {
  const path = `${dir}/.${key}.lock`;
  try {
    const st = Deno.lstatSync(path);
    if (!st.isFile || st.size !== 0) return false;
    Deno.removeSync(path);
    return true;
  } catch {
    return false;
  }
}

// What the key's lock file holds, if it has one: what a killed writer left behind.
function lockNote(dir: string, key: string): string {
  try {
    const st = Deno.lstatSync(`${dir}/.${key}.lock`);
    const text = st.isFile ? Deno.readTextFileSync(`${dir}/.${key}.lock`) : "";
    return ` (its lock file is there: ${st.isFile ? `${st.size} bytes` : "not a file"}${
      text ? `, "${text}"` : ""
    }, modified ${Math.round((Date.now() - (st.mtime?.getTime() ?? 0)) / 1000)} s ago)`;
  } catch {
    return "";
  }
}

async function write(
  dir: string,
  k: KeyModel,
  f: { value: number | null } | { torn: string } | undefined,
  plain: Store,
  checked: Store,
  description: string,
  content: string,
  signal: AbortSignal,
): Promise<void> {
  if (f !== undefined && "torn" in f) {
    // An entry torn past reading: an operator removes the file (a delete cannot read its record).
    await plain.delete(k.key, { signal }).catch(() => Deno.remove(`${dir}/${k.key}.md`));
  }
  const present = f !== undefined && "value" in f && f.value !== null;
  if (present && k.group.readBeforeUpdate) {
    // Through the lock of a revision-checked update, as the key's own workload writes.
    const scope = new Scope();
    await checked.read(k.key, { scope, signal });
    await checked.update(k.key, description, content, { scope, signal });
  } else if (present) await plain.update(k.key, description, content, { signal });
  else await plain.create(k.key, description, content, { signal });
}

interface Worker {
  /** Acknowledged writes so far, of the durable workloads when there are any. */
  acks(): number;
  readonly exited: boolean;
  kill(): void;
  lines(): Promise<string[]>;
}

function spawnWorker(
  dir: string,
  groups: readonly Group[],
  keys: Map<string, KeyModel>,
  lanes: readonly number[],
  seed: number,
  env: Record<string, string> | undefined,
): Worker {
  const job: WorkerJob = {
    dir,
    seed,
    stores: groups.map((g) => ({
      durable: g.durable,
      readBeforeUpdate: g.readBeforeUpdate,
      lanes: lanes.map((l) =>
        [...keys.values()].filter((k) => k.group === g && k.key.startsWith(`${g.name}${l}-`))
          .map((k) => ({ key: k.key, version: k.acked, next: k.next }))
      ),
    })),
  };
  // Its lines are text (`B ...`, `A ...`), kept as raw records as they arrive.
  const child = spawnDeno(WORKER, [JSON.stringify(job)], {
    name: "power-cut worker",
    rawLines: true,
    timeLimitMs: WORKER_TIME_LIMIT_MS,
    ...(env === undefined ? {} : { env }),
  });
  const durableKeys = new Set([...keys.values()].filter((k) => k.group.durable).map((k) => k.key));
  const counts = (line: string) =>
    line.startsWith("A ") && (durableKeys.size === 0 || durableKeys.has(line.slice(2)));
  let acks = 0;
  let seen = 0;
  let exited = false;
  void child.status.then(() => (exited = true));
  return {
    acks: () => {
      for (; seen < child.records.length; seen++) {
        if (counts(String(child.records[seen]!.line ?? ""))) acks++;
      }
      return acks;
    },
    get exited() {
      return exited;
    },
    kill: () => child.kill("SIGKILL"),
    lines: async () => {
      const out = await child.finished();
      const lines = out.stdout.split("\n");
      // A line cut short by the kill is no line: the write it began had not started.
      if (!out.stdout.endsWith("\n")) lines.pop();
      if (out.signal !== "SIGKILL" && out.code !== 0) {
        lines.push(
          `E - the worker exited with status ${out.code} before the cut: ${
            out.stderr.trim().slice(-500)
          }`,
        );
      }
      return lines;
    },
  };
}
