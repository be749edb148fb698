// File single-process rows: what stands in the way of a create, an update and a delete at the
// floor with history on. Each op is timed key by key next to the floor (bench/_raw.ts) and next to
// the floor doing the directory flushes history's protocol needs and nothing else (the staged
// name flushed while the data is, the version linked, the store's and the key's history
// directory flushed at the end: docs/design/history.md), so the row says how much of the gap is
// those flushes and how much the library's own work; and the CPU each spends per op, which the
// multi-process runs share (4 processes on these 2 cores).

import { existsSync, mkdirSync } from "node:fs";
import process from "node:process";
import type { Locations } from "./_location.ts";
import { openStore } from "./_location.ts";
import { syncDir } from "./_raw.ts";
import { median, ratios, type Spread } from "./_stats.ts";
import { entriesOf } from "./_target.ts";

/** One row, as bench/micro.ts's `MicroRow` (not imported: micro.ts imports this file). */
interface MicroRow {
  readonly section: string;
  readonly backend: "file";
  readonly unit: "µs/op";
  readonly values: Record<string, number>;
  readonly ratio: Omit<Spread, "trials"> & { readonly of: string };
}

const ENTRIES = entriesOf(1024);
const DESCRIPTION = "bench";
type Op = "create" | "update" | "delete";

/**
 * One row per op: the library, the floor, and the floor with history's flushes, µs per op, each
 * with the process's CPU per op (`<label> CPU`).
 */
export async function filePartsSections(o: {
  readonly quick: boolean;
  readonly trials: number;
  readonly locations: Locations;
}): Promise<MicroRow[]> {
  const trials: Record<Op, Record<string, number>[]> = { create: [], update: [], delete: [] };
  for (let t = 0; t < o.trials; t++) {
    await using lib = await o.locations.fresh("file");
    await using raw = await o.locations.fresh("file");
    await using flushes = await o.locations.fresh("file");
    const store = await openStore(lib);
    const floor = rawOps(raw.dir as string);
    const proto = protocolOps(flushes.dir as string);
    const keys = Array.from({ length: o.quick ? 30 : 200 }, (_, i) => `p${t}-${i}`);
    const library: Record<Op, (key: string) => Promise<unknown>> = {
      create: (key) => store.create(key, DESCRIPTION, ENTRIES.createContent),
      update: (key) => store.update(key, DESCRIPTION, ENTRIES.updateContent),
      delete: (key) => store.delete(key),
    };
    for (const op of ["create", "update", "delete"] as const) {
      const calls = {
        library: library[op],
        floor: floor[op],
        "floor + history's flushes": proto[op],
      };
      // Time and the process's CPU (user and system, every thread's), ms.
      const total: Record<string, number> = {};
      for (const key of keys) {
        for (const [label, call] of Object.entries(calls)) {
          const [t0, c0] = [performance.now(), process.cpuUsage()];
          await call(key);
          const c = process.cpuUsage(c0);
          total[label] = (total[label] ?? 0) + performance.now() - t0;
          total[`${label} CPU`] = (total[`${label} CPU`] ?? 0) + (c.user + c.system) / 1000;
        }
      }
      trials[op].push(
        Object.fromEntries(Object.entries(total).map(([l, ms]) => [l, (ms * 1000) / keys.length])),
      );
    }
  }
  return (["create", "update", "delete"] as const).map((op) => {
    const labels = Object.keys(trials[op][0] ?? {});
    const values = Object.fromEntries(
      labels.map((l) => [l, median(trials[op].map((t) => t[l]!))]),
    );
    const { trials: _, ...spread } = ratios(
      trials[op].map((t) => [t["library"], t["floor + history's flushes"]]),
    );
    return {
      section: `${op} parts`,
      backend: "file",
      unit: "µs/op",
      values,
      ratio: { of: "library / floor + history's flushes", ...spread },
    };
  });
}

async function stage(dir: string, key: string, bytes: Uint8Array, also?: Promise<void>) {
  const temp = `${dir}/.${key}.${crypto.randomUUID()}.tmp`;
  using file = Deno.openSync(temp, { write: true, createNew: true, mode: 0o600 });
  for (let off = 0; off < bytes.length;) off += file.writeSync(bytes.subarray(off));
  await Promise.all([file.syncData(), also]);
  return temp;
}

// The floor: bench/_raw.ts's durable create, update and delete, one directory fsync each.
function rawOps(dir: string): Record<Op, (key: string) => Promise<unknown>> {
  const path = (key: string) => `${dir}/${key}.md`;
  return {
    async create(key) {
      const temp = await stage(dir, key, ENTRIES.createBytes);
      Deno.linkSync(temp, path(key));
      Deno.removeSync(temp);
      await syncDir(dir);
    },
    async update(key) {
      Deno.renameSync(await stage(dir, key, ENTRIES.updateBytes), path(key));
      await syncDir(dir);
    },
    async delete(key) {
      Deno.removeSync(path(key));
      await syncDir(dir);
    },
  };
}

// The floor with history's directory flushes: the staged name flushed with its data, a version
// linked in `.history/<key>`, the store's and the key's directory flushed together at the end
// (and `.history` when a key's directory is new). No record, lock, look, count or checks.
function protocolOps(dir: string): Record<Op, (key: string) => Promise<unknown>> {
  const path = (key: string) => `${dir}/${key}.md`;
  const history = `${dir}/.history`;
  const seqs = new Map<string, number>();
  const version = (key: string) => {
    const seq = (seqs.get(key) ?? 0) + 1;
    seqs.set(key, seq);
    return `${history}/${key}/${seq}.md`;
  };
  return {
    async create(key) {
      if (!existsSync(history)) mkdirSync(history);
      mkdirSync(`${history}/${key}`);
      const temp = await stage(dir, key, ENTRIES.createBytes, syncDir(dir));
      Deno.linkSync(temp, version(key));
      Deno.linkSync(temp, path(key));
      Deno.removeSync(temp);
      await Promise.all([syncDir(dir), syncDir(`${history}/${key}`), syncDir(history)]);
    },
    async update(key) {
      const kd = `${history}/${key}`;
      const temp = await stage(
        dir,
        key,
        ENTRIES.updateBytes,
        Promise.all([syncDir(dir), syncDir(kd)]).then(() => {}),
      );
      Deno.linkSync(temp, version(key));
      Deno.renameSync(temp, path(key));
      await syncDir(dir);
    },
    async delete(key) {
      const kd = `${history}/${key}`;
      const pending = `${dir}/.${key}.del`;
      const temp = await stage(
        dir,
        key,
        ENTRIES.createBytes.subarray(0, 200),
        Promise.all([syncDir(dir), syncDir(kd)]).then(() => {}),
      );
      Deno.renameSync(temp, pending);
      Deno.linkSync(pending, version(key));
      Deno.removeSync(path(key));
      await Promise.all([syncDir(dir), syncDir(kd)]);
      Deno.removeSync(pending);
    },
  };
}
