// The peers table and the lost-update table: the same workload on this library's two backends
// and on what a user would pick instead (bench/_peers.ts), in 1 and 4 processes.
//
// Workload per system, N keys of 1 KiB, in a fresh directory or bucket: create every key, read
// every key, update every key, list (repeated), delete every key; with 4 processes each takes
// every 4th key and all list. Figures are ops/s over the phase's wall time (first start to last
// end). Lost updates: 4 processes each make `increments` read-modify-write increments of one key.
//
// Run by bench/main.ts, or alone: `deno run -A --unstable-kv bench/peers.ts [--quick]
// [--servers=URL]`; prints
// one JSON object (PeersResult). `--worker` is the worker process's mode.

import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import {
  lockedRetries,
  LOST_UPDATE_ONLY,
  openPeer,
  type Peer,
  type Place,
  type System,
  SYSTEMS,
} from "./_peers.ts";
import { privateNatsServer, rbuSupported } from "./_library.ts";
import { readLines, WorkerProcess } from "./_pool.ts";
import { median } from "./_stats.ts";

/** ops/s of one operation of one system at one size and process count. */
export interface PeerRow {
  readonly system: System;
  readonly n: number;
  readonly processes: number;
  readonly op: "create" | "read" | "update" | "list" | "delete";
  readonly opsPerSec: number;
  /** Entries a listing saw after the create phase (a lost create shows as fewer than n). */
  readonly kept?: number;
  /** Reads, updates or deletes that failed (of a key a lost create never wrote). */
  readonly failed: number;
  /** Passes this row is the median of. */
  readonly trials?: number;
}

/** One system's lost-update count. */
export interface LostRow {
  readonly system: System;
  readonly processes: number;
  readonly increments: number;
  readonly final: number;
  readonly lost: number;
  readonly retries: number;
}

/** What peers.ts prints. */
export interface PeersResult {
  readonly rows: PeerRow[];
  readonly lost: LostRow[];
  readonly notes: string[];
}

type Command =
  | { cmd: "open"; system: System; place: Place }
  | { cmd: "run"; op: string; keys: string[]; reps: number }
  | { cmd: "close" }
  | { cmd: "exit" };

const send = (w: WorkerProcess, c: Command) => w.send(c) as Promise<Reply>;

const DESCRIPTION = "Benchmark entry: a note one worker wrote for another to read";
const SELF = new URL(import.meta.url);
const ENC = new TextEncoder();

async function workerMain(): Promise<void> {
  let peer: Peer | undefined;
  let system = "";
  const create = "c".repeat(1024);
  const update = "u".repeat(1024);
  for await (const line of readLines(Deno.stdin.readable)) {
    const c = JSON.parse(line) as Command;
    let reply: unknown;
    try {
      if (c.cmd === "exit") {
        await peer?.close();
        await Deno.stdout.write(ENC.encode(JSON.stringify({ ok: true }) + "\n"));
        return;
      } else if (c.cmd === "open") {
        system = c.system;
        peer = await openPeer(c.system, c.place);
        reply = { ok: true };
      } else if (c.cmd === "close") {
        await peer?.close();
        peer = undefined;
        reply = { ok: true };
      } else {
        const p = peer!;
        let retries = 0;
        let seen = 0;
        let failed = 0;
        const start = performance.timeOrigin + performance.now();
        for (let r = 0; r < c.reps; r++) {
          for (const key of c.keys) {
            try {
              if (c.op === "create") await p.create(key, DESCRIPTION, create);
              else if (c.op === "seed") await p.create(key, "counter", "count: 0;");
              else if (c.op === "read") await p.read(key);
              else if (c.op === "update") await p.update(key, update);
              else if (c.op === "delete") await p.delete(key);
              else if (c.op === "list") seen = await p.list();
              else if (c.op === "increment") retries += await p.increment(key);
              else if (c.op === "value") {
                seen = Number(/count: (\d+);/.exec(await p.read(key))?.[1]);
              }
            } catch (e) {
              // A peer that lost a create fails the read of it: counted, not fatal.
              if (!["read", "update", "delete"].includes(c.op)) throw e;
              failed++;
            }
          }
        }
        const end = performance.timeOrigin + performance.now();
        reply = { ok: true, result: { start, end, retries, seen, failed, locked: lockedRetries } };
      }
    } catch (e) {
      const error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      reply = { ok: false, error: `${system}: ${error}` };
    }
    await Deno.stdout.write(ENC.encode(JSON.stringify(reply) + "\n"));
  }
}

interface Reply {
  start: number;
  end: number;
  retries: number;
  seen: number;
  failed: number;
}

/** Sends each worker its command at once; the wall time from the first start to the last end. */
async function all(workers: WorkerProcess[], commands: Command[]) {
  const replies = await Promise.all(workers.map((w, i) => send(w, commands[i]!)));
  // Only "run" replies carry times; "open" and "close" reply with nothing.
  const timed = replies.filter((r) => r !== undefined);
  const wall = Math.max(...timed.map((r) => r.end)) - Math.min(...timed.map((r) => r.start));
  return { replies, wall };
}

function progress(line: string): void {
  if (Deno.stderr.isTerminal()) Deno.stderr.writeSync(ENC.encode(`\r\x1b[K${line}`));
}

interface Opts {
  quick: boolean;
  /** Passes of the peers workload; each figure is the median (lost updates run once). */
  trials: number;
  servers: readonly string[] | undefined;
  sizes?: number[];
  systems?: System[];
}

// One row per system, size, process count and operation: the median ops/s over trials, the
// fewest entries kept and the most failures any trial saw.
function medians(samples: readonly PeerRow[]): PeerRow[] {
  const groups = new Map<string, PeerRow[]>();
  for (const r of samples) {
    const k = `${r.system}|${r.n}|${r.processes}|${r.op}`;
    groups.set(k, [...groups.get(k) ?? [], r]);
  }
  return [...groups.values()].map((g) => {
    const kept = g.map((r) => r.kept).filter((k) => k !== undefined);
    return {
      ...g[0]!,
      opsPerSec: median(g.map((r) => r.opsPerSec)),
      failed: Math.max(...g.map((r) => r.failed)),
      ...(kept.length > 0 ? { kept: Math.min(...kept) } : {}),
      trials: g.length,
    };
  });
}

/** Runs both tables. */
export async function runPeers(o: Opts, work: string): Promise<PeersResult> {
  const notes: string[] = [];
  const server = o.servers === undefined ? await privateNatsServer() : undefined;
  const servers = o.servers ?? [server!.url];
  const nc = await connect({ servers: [...servers] });
  const workers = Array.from({ length: 4 }, (_, i) => new WorkerProcess(i, SELF, ["--worker"]));
  let seq = 0;
  // A fresh directory and bucket, removed when the `await using` scope ends.
  const place = async (): Promise<Place & AsyncDisposable> => {
    const dir = await Deno.makeTempDir({ dir: work, prefix: "peer-" });
    const bucket = `agentmem_peers_${Date.now().toString(36)}_${seq++}`;
    const kv = await new Kvm(nc).create(bucket, { history: 1 });
    return {
      dir,
      bucket,
      servers,
      async [Symbol.asyncDispose]() {
        await kv.destroy().catch(() => {});
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      },
    };
  };
  const probe = await Deno.makeTempDir({ dir: work });
  const rbu = await rbuSupported(probe);
  if (!rbu) notes.push("agentmem file, readBeforeUpdate: not run (this library lacks the option)");
  const systems = (o.systems ?? [...SYSTEMS]).filter((s) =>
    rbu || s !== "agentmem file, readBeforeUpdate"
  );
  const rows: PeerRow[] = [];
  const lost: LostRow[] = [];
  try {
    const samples: PeerRow[] = [];
    for (let trial = 0; trial < o.trials; trial++) {
      for (const n of o.sizes ?? (o.quick ? [20] : [100, 1000])) {
        for (const processes of [1, 4]) {
          for (const system of systems.filter((s) => !LOST_UPDATE_ONLY.includes(s))) {
            const ws = workers.slice(0, processes);
            // Untimed: module loading, JIT and first connections, once per system and worker.
            if (!o.quick && trial === 0 && n === (o.sizes ?? [100])[0]) {
              await using warm = await place();
              await workload(ws, system, 16, warm, o);
            }
            progress(`peers: trial ${trial + 1}, ${system}, ${n} keys, ${processes} process(es)`);
            await using p = await place();
            samples.push(...await workload(ws, system, n, p, o));
          }
        }
      }
    }
    rows.push(...medians(samples));
    const increments = o.quick ? 20 : 200;
    for (const system of systems) {
      progress(`lost updates: ${system}`);
      await using p = await place();
      const [w0] = workers as [WorkerProcess];
      await send(w0, { cmd: "open", system, place: p });
      await send(w0, { cmd: "run", op: "seed", keys: ["counter"], reps: 1 });
      await all(workers, workers.map(() => ({ cmd: "open", system, place: p })));
      const { replies } = await all(
        workers,
        workers.map(() => ({ cmd: "run", op: "increment", keys: ["counter"], reps: increments })),
      );
      const final = (await send(w0, { cmd: "run", op: "value", keys: ["counter"], reps: 1 })).seen;
      await all(workers, workers.map(() => ({ cmd: "close" })));
      const total = increments * workers.length;
      const retries = replies.reduce((a, r) => a + r.retries, 0);
      lost.push({ system, processes: 4, increments: total, final, lost: total - final, retries });
    }
  } finally {
    await Promise.all(workers.map((w) => w.close()));
    await nc.close();
    await server?.stop();
  }
  return { rows, lost, notes };
}

async function workload(
  workers: WorkerProcess[],
  system: System,
  n: number,
  place: Place,
  o: Opts,
): Promise<PeerRow[]> {
  const P = workers.length;
  const keys = Array.from({ length: n }, (_, i) => `k${String(i).padStart(4, "0")}`);
  const mine = (i: number) => keys.filter((_, k) => k % P === i);
  await all(workers, workers.map(() => ({ cmd: "open", system, place })));
  const rows: PeerRow[] = [];
  const listReps = o.quick ? 1 : n >= 1000 ? 3 : 10;
  for (const op of ["create", "read", "update", "list", "delete"] as const) {
    const reps = op === "list" ? listReps : 1;
    const { wall, replies } = await all(
      workers,
      workers.map((_, i) => ({ cmd: "run", op, keys: op === "list" ? ["-"] : mine(i), reps })),
    );
    const ops = op === "list" ? reps * P : n;
    const opsPerSec = (ops * 1000) / wall;
    // The listing runs after every create: it shows how many creates were kept.
    const kept = op === "list" ? { kept: replies[0]!.seen } : {};
    const failed = replies.reduce((a, r) => a + r.failed, 0);
    rows.push({ system, n, processes: P, op, opsPerSec, failed, ...kept });
  }
  await all(workers, workers.map(() => ({ cmd: "close" })));
  return rows;
}

if (import.meta.main) {
  if (Deno.args.includes("--worker")) {
    await workerMain();
    Deno.exit(0);
  } else {
    const work = await Deno.makeTempDir({ prefix: "agentmem-peers-" });
    try {
      const quick = Deno.args.includes("--quick");
      const servers = Deno.args.find((a) => a.startsWith("--servers="))?.slice(10).split(",");
      const trials = Number(Deno.args.find((a) => a.startsWith("--trials="))?.slice(9) ?? 3);
      console.log(
        JSON.stringify(
          await runPeers({ quick, servers, trials: quick ? 1 : Math.min(3, trials) }, work),
        ),
      );
    } finally {
      await Deno.remove(work, { recursive: true });
    }
  }
}
