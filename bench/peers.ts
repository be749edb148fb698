// The peers table and the lost-update table: the same workload on this library's two backends
// and on what a user would pick instead (bench/_peers.ts), in 1 and 4 worker processes.
//
// Workload per system, N keys of 1 KiB, in a fresh directory or bucket: create every key, read
// every key, update every key, list (repeated), delete every key; with 4 processes each takes
// every 4th key and all list. Figures are ops/s over the phase's wall time (first start to last
// end). Lost updates: 4 processes each make `increments` read-modify-write increments of one key.

import type { Location } from "./_protocol.ts";
import type { Locations } from "./_location.ts";
import type { runPeer } from "./_peers.ts";
import { progress } from "./_format.ts";
import { WorkerPool } from "./_pool.ts";
import { groupBy, median } from "./_stats.ts";

type Reply = Awaited<ReturnType<typeof runPeer>>;

/** Every system the peers table and the lost-update table can run. */
const SYSTEMS = [
  "agentmem file",
  "agentmem file, readBeforeUpdate",
  "agentmem jetstream",
  "Deno KV",
  "SQLite",
  "Anthropic filesystem tool",
  "MCP memory (JSONL)",
  "unstorage fs driver",
] as const;
/** Systems run in the lost-update table only. */
const LOST_UPDATE_ONLY: readonly string[] = [
  "agentmem file, readBeforeUpdate",
  "unstorage fs driver",
];

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

/** What the peers need from the driver. */
export interface PeersOptions {
  readonly quick: boolean;
  /** Passes of the peers workload; each figure is the median (lost updates run once). */
  readonly trials: number;
  readonly servers: readonly string[];
  readonly locations: Locations;
}

/** Runs both tables. */
export async function runPeers(o: PeersOptions) {
  await using pool = await WorkerPool.start(4, (index) => ({
    cmd: "init",
    index,
    servers: o.servers,
    valueSize: 1024,
    warmupOps: 0,
    warmup: {},
  }));
  const sizes = o.quick ? [20] : [100, 1000];
  const samples: PeerRow[] = [];
  for (let trial = 0; trial < o.trials; trial++) {
    for (const n of sizes) {
      for (const processes of [1, 4]) {
        for (const system of SYSTEMS.filter((s) => !LOST_UPDATE_ONLY.includes(s))) {
          // Untimed: module loading, JIT and first connections, once per system and worker.
          if (!o.quick && trial === 0 && n === sizes[0]) {
            await using warm = await o.locations.fresh();
            await workload(pool, processes, system, 16, warm, o.quick);
          }
          progress(`peers: trial ${trial + 1}, ${system}, ${n} keys, ${processes} process(es)`);
          await using place = await o.locations.fresh();
          samples.push(...await workload(pool, processes, system, n, place, o.quick));
        }
      }
    }
  }
  const lost = [];
  const increments = o.quick ? 20 : 200;
  for (const system of SYSTEMS) {
    progress(`lost updates: ${system}`);
    await using place = await o.locations.fresh();
    await run(pool, 1, system, () => ({ cmd: "peer-open", system, location: place }));
    await run(pool, 1, system, () => ({ cmd: "peer-run", op: "seed", keys: ["counter"], reps: 1 }));
    await run(pool, 4, system, () => ({ cmd: "peer-open", system, location: place }));
    const replies = await run(
      pool,
      4,
      system,
      () => ({ cmd: "peer-run", op: "increment", keys: ["counter"], reps: increments }),
    );
    const [value] = await run(
      pool,
      1,
      system,
      () => ({ cmd: "peer-run", op: "value", keys: ["counter"], reps: 1 }),
    );
    await run(pool, 4, system, () => ({ cmd: "peer-close" }));
    const total = increments * pool.size;
    const final = (value as Reply).seen;
    const retries = replies.reduce((a, r) => a + r.retries, 0);
    lost.push({
      system,
      processes: pool.size,
      increments: total,
      final,
      lost: total - final,
      retries,
    });
  }
  return { rows: medians(samples), lost, notes: [] };
}

// The first `count` workers run a command each at once; an error names the system.
function run(
  pool: WorkerPool,
  count: number,
  system: string,
  command: (i: number) => Parameters<WorkerPool["one"]>[1],
) {
  return pool.each<Reply>(command, count).catch((e) => {
    throw new Error(`${system}: ${e instanceof Error ? e.message : e}`);
  });
}

async function workload(
  pool: WorkerPool,
  processes: number,
  system: string,
  n: number,
  location: Location,
  quick: boolean,
): Promise<PeerRow[]> {
  const keys = Array.from({ length: n }, (_, i) => `k${String(i).padStart(4, "0")}`);
  await run(pool, processes, system, () => ({ cmd: "peer-open", system, location }));
  const rows: PeerRow[] = [];
  const listReps = quick ? 1 : n >= 1000 ? 3 : 10;
  for (const op of ["create", "read", "update", "list", "delete"]) {
    const reps = op === "list" ? listReps : 1;
    const mine = (i: number) => op === "list" ? ["-"] : keys.filter((_, k) => k % processes === i);
    const replies = await run(
      pool,
      processes,
      system,
      (i) => ({ cmd: "peer-run", op, keys: mine(i), reps }),
    );
    const wall = Math.max(...replies.map((r) => r.end)) - Math.min(...replies.map((r) => r.start));
    const opsPerSec = ((op === "list" ? reps * processes : n) * 1000) / wall;
    // The listing runs after every create: it shows how many creates were kept.
    const kept = op === "list" ? { kept: (replies[0] as Reply).seen } : {};
    const failed = replies.reduce((a, r) => a + r.failed, 0);
    rows.push({ system, n, processes, op, opsPerSec, failed, ...kept });
  }
  await run(pool, processes, system, () => ({ cmd: "peer-close" }));
  return rows;
}

// One row per system, size, process count and operation: the median ops/s over trials, the
// fewest entries kept and the most failures any trial saw.
function medians(samples: readonly PeerRow[]): PeerRow[] {
  return groupBy(samples, (r) => `${r.system}|${r.n}|${r.processes}|${r.op}`).map((g) => {
    const kept = g.flatMap((r) => r.kept === undefined ? [] : [r.kept]);
    return {
      ...g[0] as PeerRow,
      opsPerSec: median(g.map((r) => r.opsPerSec)),
      failed: Math.max(...g.map((r) => r.failed)),
      ...(kept.length > 0 ? { kept: Math.min(...kept) } : {}),
      trials: g.length,
    };
  });
}
