// The peers table and the lost-update table: the same workload on this library's two backends
// and on what a user would pick instead (bench/_peers.ts), in 1 and 4 worker processes; ops/s
// over each phase's wall time, first start to last end (the workload: BENCH.md, "What runs").

import type { Command, Location } from "./_protocol.ts";
import type { Locations } from "./_location.ts";
import type { runPeer } from "./_peers.ts";
import { progress } from "./_format.ts";
import { startPool, type WorkerPool } from "./_pool.ts";
import { groupBy, median } from "./_stats.ts";

type Reply = Awaited<ReturnType<typeof runPeer>>;

// Every system, in the tables' order; two run in the lost-update table only.
const SYSTEMS = ["agentmem file", "agentmem file, readBeforeUpdate", "agentmem jetstream"]
  .concat(["Deno KV", "SQLite", "Anthropic filesystem tool", "MCP memory (JSONL)"])
  .concat(["unstorage fs driver"]);
const LOST_UPDATE_ONLY = ["agentmem file, readBeforeUpdate", "unstorage fs driver"];

/** ops/s of one operation of one peer at one size and process count. */
export interface PeerRow {
  readonly system: string;
  readonly n: number;
  readonly processes: number;
  readonly op: string;
  readonly opsPerSec: number;
  /** Entries a listing saw after the create phase (a lost create shows as fewer than n). */
  readonly kept?: number;
  /** Reads, updates or deletes that failed (of a key a lost create never wrote). */
  readonly failed: number;
  /** Passes this row is the median of. */
  readonly trials?: number;
}

/** The peers table and the lost-update table. */
export type PeersResult = Awaited<ReturnType<typeof runPeers>>;

type Options = { quick: boolean; trials: number; servers: readonly string[]; locations: Locations };

/** Runs both tables; each peers figure is the median of `trials` passes (lost updates run once). */
export async function runPeers({ servers, quick, trials, locations }: Options) {
  const init = { servers, valueSize: 1024, warmupOps: 0, warmup: {} };
  await using pool = await startPool(4, (index) => ({ cmd: "init", index, ...init }));
  const sizes = quick ? [20] : [100, 1000];
  const samples: PeerRow[] = [];
  for (let trial = 0; trial < trials; trial++) {
    for (const n of sizes) {
      for (const processes of [1, 4]) {
        for (const system of SYSTEMS.filter((s) => !LOST_UPDATE_ONLY.includes(s))) {
          const peers = on(pool, system, processes);
          // Untimed: module loading, JIT and first connections, once per system and worker.
          if (!quick && trial === 0 && n === sizes[0]) {
            await using warm = await locations.fresh();
            await workload(peers, 16, warm, quick);
          }
          progress(`peers: trial ${trial + 1}, ${system}, ${n} keys, ${processes} process(es)`);
          await using place = await locations.fresh();
          samples.push(...await workload(peers, n, place, quick));
        }
      }
    }
  }
  const lost = [];
  const increments = quick ? 20 : 200;
  const counter = () => ["counter"];
  for (const system of SYSTEMS) {
    progress(`lost updates: ${system}`);
    const [one, all] = [on(pool, system, 1), on(pool, system, pool.size)];
    await using place = await locations.fresh();
    await one.open(place);
    await one.run("seed", counter);
    await all.open(place);
    const replies = await all.run("increment", counter, increments);
    const final = (await one.run("value", counter))[0]?.seen as number;
    await all.close();
    const [processes, total] = [pool.size, increments * pool.size];
    const retries = replies.reduce((a, r) => a + r.retries, 0);
    lost.push({ system, processes, increments: total, final, lost: total - final, retries });
  }
  return { rows: medians(samples), lost, notes: [] };
}

/** The peer `system` on the first `count` workers; an error names the system. */
function on(pool: WorkerPool, system: string, count: number) {
  const named = (e: Error) => Promise.reject(new Error(`${system}: ${e.message}`));
  const send = (command: (i: number) => Command) => pool.each<Reply>(command, count).catch(named);
  return {
    system,
    count,
    open: (location: Location) => send(() => ({ cmd: "peer-open", system, location })),
    run: (op: string, keys: (i: number) => string[], reps = 1) =>
      send((i) => ({ cmd: "peer-run", op, keys: keys(i), reps })),
    close: () => send(() => ({ cmd: "peer-close" })),
  };
}

async function workload(peers: ReturnType<typeof on>, n: number, place: Location, quick: boolean) {
  const { system, count: processes } = peers;
  const keys = Array.from({ length: n }, (_, i) => `k${String(i).padStart(4, "0")}`);
  const mine = (i: number) => keys.filter((_, k) => k % processes === i);
  await peers.open(place);
  const rows: PeerRow[] = [];
  for (const op of ["create", "read", "update", "list", "delete"]) {
    const reps = op !== "list" ? 1 : quick ? 1 : n >= 1000 ? 3 : 10;
    const replies = await peers.run(op, op === "list" ? () => ["-"] : mine, reps);
    const wall = Math.max(...replies.map((r) => r.end)) - Math.min(...replies.map((r) => r.start));
    const opsPerSec = ((op === "list" ? reps * processes : n) * 1000) / wall;
    // The listing runs after every create: it shows how many creates were kept.
    const kept = op === "list" ? { kept: (replies[0] as Reply).seen } : {};
    const failed = replies.reduce((a, r) => a + r.failed, 0);
    rows.push({ system, n, processes, op, opsPerSec, failed, ...kept });
  }
  await peers.close();
  return rows;
}

// One row per system, size, process count and operation: the median ops/s over trials, the
// fewest entries kept and the most failures any trial saw.
function medians(samples: readonly PeerRow[]): PeerRow[] {
  return groupBy(samples, (r) => `${r.system}|${r.n}|${r.processes}|${r.op}`).map((g) => {
    const kept = g.flatMap((r) => r.kept === undefined ? [] : [r.kept]);
    const opsPerSec = median(g.map((r) => r.opsPerSec));
    const failed = Math.max(...g.map((r) => r.failed));
    const fewest = kept.length > 0 ? { kept: Math.min(...kept) } : {};
    return { ...g[0] as PeerRow, opsPerSec, failed, ...fewest, trials: g.length };
  });
}
