// Single-process measurements that need no worker pool, each a ratio taken within one trial:
//
// - exists: `create()` of a key that holds a memory against `read()` of it (both backends);
// - capacity: a create at 1,000 entries against one in an empty store, each divided by the raw
//   create made in the same state (the exact capacity check is what grows with the count);
// - rbu: file `update()` with `readBeforeUpdate: true` against the raw durable update;
// - inflight: 16 durable file creates/updates in flight through one handle, against today's
//   library (bench/reference.json's commit, extracted with `git archive`) and the raw floor.
//
// Run by bench/main.ts (`--micro`), or alone: `deno run -A bench/micro.ts [--quick] [--trials=N]
// [--servers=URL]`; prints one JSON object (MicroResult) on stdout.

import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { openFileStore, openJetStreamStore, Scope, serializeEntry, type Store } from "../mod.ts";
import { inflightLibrary, inflightRaw, type InflightResult, type OpenFile } from "./_inflight.ts";
import { DirSync, rawCreate, rawUpdate } from "./_raw.ts";
import { median } from "./_stats.ts";
import { privateNatsServer, rbuSupported } from "./_library.ts";
import type { TargetRow } from "./_results.ts";

/** One measured row: medians over trials (µs per op, or ops/s) and the within-trial ratio. */
export interface MicroRow {
  readonly section: string;
  readonly backend: string;
  readonly unit: "µs/op" | "ops/s";
  readonly values: Record<string, number>;
  readonly ratio: { readonly of: string; readonly median: number; min: number; max: number };
}

/** What micro.ts prints. */
export interface MicroResult {
  readonly rows: MicroRow[];
  readonly targets: TargetRow[];
  readonly notes: string[];
}

const DESCRIPTION = "Benchmark entry: a note one worker wrote for another to read";
const ENC = new TextEncoder();
const REFERENCE = new URL("./reference.json", import.meta.url);
const SIZE = 1024;
const BODY = "c".repeat(SIZE);
const BYTES = ENC.encode(serializeEntry(DESCRIPTION, BODY));
const UPDATE_BYTES = ENC.encode(serializeEntry(DESCRIPTION, "u".repeat(SIZE)));

interface Opts {
  trials: number;
  quick: boolean;
  servers: string[] | undefined;
}

/** Per trial: a map of label → value; the ratio is `of[0] / of[1]` within each trial. */
function row(
  section: string,
  backend: string,
  unit: MicroRow["unit"],
  trials: Record<string, number>[],
  of: [string, string],
): MicroRow {
  const labels = Object.keys(trials[0] ?? {});
  const values = Object.fromEntries(labels.map((l) => [l, median(trials.map((t) => t[l]!))]));
  const ratios = trials.map((t) => t[of[0]]! / t[of[1]]!);
  return {
    section,
    backend,
    unit,
    values,
    ratio: {
      of: `${of[0]} / ${of[1]}`,
      median: median(ratios),
      min: Math.min(...ratios),
      max: Math.max(...ratios),
    },
  };
}

async function perOp(keys: readonly string[], fn: (k: string) => Promise<unknown>) {
  const t0 = performance.now();
  for (const k of keys) await fn(k);
  return ((performance.now() - t0) * 1000) / keys.length;
}

/** µs per op of each labelled call, the calls alternating key by key so they share the disk's
 * moment-to-moment fsync latency. */
async function alternating(
  keys: readonly string[],
  calls: Record<string, (k: string) => Promise<unknown>>,
): Promise<Record<string, number>> {
  const total: Record<string, number> = {};
  for (const k of keys) {
    for (const [label, call] of Object.entries(calls)) {
      const t0 = performance.now();
      await call(k);
      total[label] = (total[label] ?? 0) + performance.now() - t0;
    }
  }
  return Object.fromEntries(Object.entries(total).map(([l, ms]) => [l, (ms * 1000) / keys.length]));
}

const keysOf = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

async function seedFiles(dir: string, keys: readonly string[]) {
  for (const k of keys) Deno.writeFileSync(`${dir}/${k}.md`, BYTES);
  await Promise.resolve();
}

/** A backend under test: the library store and the raw create in one fresh location. */
interface Place {
  store: Store;
  seed(keys: readonly string[]): Promise<void>;
  rawCreate(key: string): Promise<unknown>;
  drop(): Promise<void>;
}

type Placer = () => Promise<Place>;

function filePlacer(work: string): Placer {
  return async () => {
    const dir = await Deno.makeTempDir({ dir: work, prefix: "micro-" });
    const rawDir = await Deno.makeTempDir({ dir: work, prefix: "micro-raw-" });
    const sync = new DirSync(rawDir);
    return {
      store: await openFileStore({ dir }),
      seed: async (keys) => {
        await seedFiles(dir, keys);
        await seedFiles(rawDir, keys);
      },
      rawCreate: (k) => rawCreate(rawDir, sync, k, BYTES),
      drop: async () => {
        await Deno.remove(dir, { recursive: true });
        await Deno.remove(rawDir, { recursive: true });
      },
    };
  };
}

function jetStreamPlacer(nc: Awaited<ReturnType<typeof connect>>): Placer {
  let n = 0;
  return async () => {
    const kvm = new Kvm(nc);
    const name = `agentmem_micro_${crypto.randomUUID().slice(0, 8)}_${n++}`;
    const kv = await kvm.create(name, { history: 1 });
    const raw = await kvm.create(`${name}_raw`, { history: 1 });
    return {
      store: await openJetStreamStore({ bucket: name, prefix: "" }, { nc }),
      seed: async (keys) => {
        for (let i = 0; i < keys.length; i += 64) {
          const chunk = keys.slice(i, i + 64);
          await Promise.all(chunk.flatMap((k) => [kv.put(k, BYTES), raw.put(k, BYTES)]));
        }
      },
      rawCreate: (k) => raw.create(k, BYTES),
      drop: async () => {
        await kv.destroy();
        await raw.destroy();
      },
    };
  };
}

async function existsSection(place: Placer, backend: string, o: Opts): Promise<MicroRow> {
  const trials: Record<string, number>[] = [];
  const keys = keysOf("e", o.quick ? 50 : 200);
  const p = await place();
  try {
    await p.seed(keys);
    await perOp(keys.slice(0, 10), (k) => p.store.read(k)); // warm-up
    for (let t = 0; t < o.trials; t++) {
      const read = await perOp(keys, (k) => p.store.read(k));
      const exists = await perOp(keys, (k) =>
        p.store.create(k, DESCRIPTION, BODY).then(
          () => Promise.reject(new Error(`create of ${k} succeeded over an entry`)),
          (e) => {
            if ((e as { code?: string }).code !== "exists") throw e;
          },
        ));
      trials.push({ "create (exists)": exists, read });
    }
  } finally {
    await p.drop();
  }
  return row("exists", backend, "µs/op", trials, ["create (exists)", "read"]);
}

async function capacitySection(place: Placer, backend: string, o: Opts): Promise<MicroRow> {
  const batch = o.quick ? 16 : 48;
  const trials: Record<string, number>[] = [];
  for (let t = 0; t < o.trials; t++) {
    const v: Record<string, number> = {};
    for (const [label, seeded] of [["empty", 0], ["1,000", 1000 - batch]] as const) {
      const p = await place();
      try {
        await p.seed(keysOf("s", seeded));
        const keys = keysOf(`n${t}-`, batch);
        const { lib, raw } = await alternating(keys, {
          lib: (k) => p.store.create(k, DESCRIPTION, BODY),
          raw: (k) => p.rawCreate(k),
        }) as { lib: number; raw: number };
        v[`create at ${label}`] = lib;
        v[`raw at ${label}`] = raw;
        v[`ratio at ${label}`] = lib / raw;
      } finally {
        await p.drop();
      }
    }
    trials.push(v);
  }
  return row("capacity", backend, "µs/op", trials, ["ratio at 1,000", "ratio at empty"]);
}

async function rbuSection(work: string, o: Opts): Promise<MicroRow | string> {
  const probe = await Deno.makeTempDir({ dir: work });
  const ok = await rbuSupported(probe);
  await Deno.remove(probe, { recursive: true });
  if (!ok) return "file readBeforeUpdate: not measured (this library does not enforce the option)";
  const keys = keysOf("u", o.quick ? 16 : 48);
  const trials: Record<string, number>[] = [];
  for (let t = 0; t < o.trials; t++) {
    const dirs = await Promise.all([0, 1, 2].map(() => Deno.makeTempDir({ dir: work })));
    const [onDir, offDir, rawDir] = dirs as [string, string, string];
    try {
      for (const d of dirs) await seedFiles(d, keys);
      const open = openFileStore as unknown as (o: Record<string, unknown>) => Promise<Store>;
      const on = await open({ dir: onDir, readBeforeUpdate: true });
      const off = await openFileStore({ dir: offDir });
      const scope = new Scope();
      for (const k of keys) await on.read(k, { scope });
      const sync = new DirSync(rawDir);
      const v: Record<string, number> = {};
      const u = "u".repeat(SIZE);
      Object.assign(
        v,
        await alternating(keys, {
          "update, readBeforeUpdate on": (k) => on.update(k, DESCRIPTION, u, { scope }),
          "update, option off": (k) => off.update(k, DESCRIPTION, u),
          "raw update": (k) => rawUpdate(rawDir, sync, k, UPDATE_BYTES),
        }),
      );
      trials.push(v);
    } finally {
      for (const d of dirs) await Deno.remove(d, { recursive: true });
    }
  }
  return row("rbu", "file", "µs/op", trials, ["update, readBeforeUpdate on", "raw update"]);
}

async function referenceLibrary(work: string): Promise<OpenFile | string> {
  const ref = JSON.parse(await Deno.readTextFile(REFERENCE)) as { commit: string };
  const root = new URL("..", import.meta.url).pathname;
  const into = await Deno.makeTempDir({ dir: work, prefix: "reference-" });
  const failed = `today's library (${ref.commit.slice(0, 7)}) could not be extracted from git`;
  try {
    const archive = await new Deno.Command("sh", {
      args: ["-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", root, ref.commit, into],
      stderr: "piped",
    }).output();
    if (!archive.success) return failed;
    const mod = await import(`file://${into}/mod.ts`) as { openFileStore: typeof openFileStore };
    return (dir) => mod.openFileStore({ dir });
  } catch (e) {
    return `${failed}: ${e instanceof Error ? e.message : e}`;
  }
}

// Without git (a shallow or exported tree), today's library cannot run beside the current one and
// the target is judged against the number recorded in bench/reference.json.
async function inflightSection(work: string, o: Opts): Promise<[MicroRow[], string?]> {
  const ref = await referenceLibrary(work);
  const lib: OpenFile = (dir) => openFileStore({ dir });
  const n = o.quick ? 64 : 512;
  const bytes = { create: BYTES, update: UPDATE_BYTES };
  const runs: [string, () => Promise<InflightResult>][] = [
    ["library", () => inflightLibrary(lib, work, n, 16, SIZE)],
    ["raw group commit", () => inflightRaw(work, n, 16, bytes)],
  ];
  if (typeof ref !== "string") {
    runs.push(["today's library", () => inflightLibrary(ref, work, n, 16, SIZE)]);
    await inflightLibrary(ref, work, 16, 16, SIZE);
  }
  await inflightLibrary(lib, work, 16, 16, SIZE);
  const trials: Record<string, Record<string, number>>[] = [];
  for (let t = 0; t < o.trials; t++) {
    const v: Record<string, Record<string, number>> = { create: {}, update: {} };
    for (let i = 0; i < runs.length; i++) {
      const [label, run] = runs[(i + t) % runs.length]!;
      const r = await run();
      v.create![label] = r.create;
      v.update![label] = r.update;
    }
    trials.push(v);
  }
  const of: [string, string] = typeof ref === "string"
    ? ["library", "raw group commit"]
    : ["library", "today's library"];
  const rows = ["create", "update"].map((op) =>
    row(`inflight ${op}`, "file", "ops/s", trials.map((t) => t[op]!), of)
  );
  return typeof ref === "string"
    ? [rows, `16 in flight: ${ref}; judged on bench/reference.json`]
    : [rows];
}

function targets(rows: readonly MicroRow[], reference: { median: Record<string, number> }) {
  const out: TargetRow[] = [];
  const fmt = (r: MicroRow) =>
    `${r.ratio.median.toFixed(2)}x (trials ${r.ratio.min.toFixed(2)}–${r.ratio.max.toFixed(2)})`;
  for (const r of rows) {
    if (r.section === "exists") {
      out.push({
        goal: `${r.backend} create of an existing key <= 1.5x a read`,
        measured: fmt(r),
        met: r.ratio.median <= 1.5,
      });
    } else if (r.section === "capacity") {
      out.push({
        goal: `${r.backend} exact capacity adds <= 10% to a create at 1,000 entries`,
        measured: `${fmt(r)} of the empty store's ratio to raw`,
        met: r.ratio.median <= 1.1,
      });
    } else if (r.section === "rbu") {
      const off = r.values["update, option off"]! / r.values["raw update"]!;
      out.push({
        goal: "file update with readBeforeUpdate: true, against the raw durable update",
        measured: `${fmt(r)}; with the option off ${off.toFixed(2)}x`,
        met: null,
      });
    } else if (r.section.startsWith("inflight")) {
      const op = r.section.slice(9);
      const fixed = r.values["library"]! / reference.median[op]!;
      const live = r.ratio.of.endsWith("today's library");
      out.push({
        goal: `file ${op}, 16 in flight, >= 1.5x today's library`,
        measured: `${live ? `${fmt(r)}; ` : ""}${fixed.toFixed(2)}x the recorded reference`,
        met: (live ? r.ratio.median : fixed) >= 1.5,
      });
    }
  }
  return out;
}

/** Runs every section; `work` is a scratch directory. */
export async function runMicro(o: Opts, work: string): Promise<MicroResult> {
  const rows: MicroRow[] = [];
  const notes: string[] = [];
  const file = filePlacer(work);
  rows.push(await existsSection(file, "file", o));
  rows.push(await capacitySection(file, "file", o));
  const rbu = await rbuSection(work, o);
  if (typeof rbu === "string") notes.push(rbu);
  else rows.push(rbu);
  const [inflight, note] = await inflightSection(work, o);
  rows.push(...inflight);
  if (note !== undefined) notes.push(note);
  const server = o.servers === undefined ? await privateNatsServer() : undefined;
  const nc = await connect({ servers: o.servers ?? [server!.url] });
  try {
    const js = jetStreamPlacer(nc);
    rows.push(await existsSection(js, "jetstream", o));
    rows.push(await capacitySection(js, "jetstream", o));
  } finally {
    await nc.close();
    await server?.stop();
  }
  const reference = JSON.parse(await Deno.readTextFile(REFERENCE));
  return { rows, targets: targets(rows, reference), notes };
}

if (import.meta.main) {
  const arg = (name: string) =>
    Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const quick = Deno.args.includes("--quick");
  const work = await Deno.makeTempDir({ prefix: "agentmem-micro-" });
  try {
    const result = await runMicro({
      quick,
      trials: Number(arg("trials") ?? (quick ? 1 : 5)),
      servers: arg("servers")?.split(","),
    }, work);
    console.log(JSON.stringify(result));
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}
