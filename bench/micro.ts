// Single-process measurements that need no worker pool, each a ratio taken within one trial:
//
// - exists: `create()` of a key that holds a memory against `read()` of it (both backends);
// - capacity: a create at 1,000 entries against one in an empty store, each divided by the raw
//   create made in the same state (the exact capacity check is what grows with the count);
// - rbu: file `update()` with `readBeforeUpdate: true` against the raw durable update;
// - inflight: 16 durable file creates/updates in flight through one handle, against today's
//   library (bench/reference.json's commit, extracted with `git archive`) and the raw
//   group-commit floor.
//
// Run by bench/main.ts (`--suites micro`); the targets are judged in bench/_summary.ts.

import type { NatsConnection } from "@nats-io/nats-core";
import { openFileStore, Scope, type Store } from "../mod.ts";
import { DESCRIPTION, type Locations, openStore, seed } from "./_location.ts";
import type { Backend } from "./_protocol.ts";
import { fileRawTarget, groupCommit, inFlight, rawCreate, rawUpdate } from "./_raw.ts";
import { jetStreamRawTarget } from "./_jetstream_raw.ts";
import { median, ratios, type Spread } from "./_stats.ts";
import { Entries } from "./_target.ts";

/** What the measurements need from the driver. */
export interface MicroOptions {
  readonly quick: boolean;
  readonly trials: number;
  /** A scratch directory (today's library is extracted into it). */
  readonly work: string;
  readonly nc: NatsConnection | undefined;
  readonly locations: Locations;
}

/** One row: medians over trials (µs per op, or ops/s) and the spread of the within-trial ratio. */
export interface MicroRow {
  readonly section: string;
  readonly backend: Backend;
  readonly unit: "µs/op" | "ops/s";
  readonly values: Record<string, number>;
  readonly ratio: Omit<Spread, "trials"> & { readonly of: string };
}

/** What the measurements found. */
export type MicroResult = Awaited<ReturnType<typeof runMicro>>;

type Trial = Record<string, number>;
type Head = Pick<MicroRow, "section" | "backend" | "unit">;
type Call = (key: string) => Promise<unknown>;
type Writes = { create: Call; update: Call };

const REFERENCE = new URL("./reference.json", import.meta.url);
const SIZE = 1024;
const BODY = "c".repeat(SIZE);
const UPDATE = "u".repeat(SIZE);
const ENTRIES = new Entries(SIZE);

/** Runs every section. */
export async function runMicro(o: MicroOptions) {
  const rows: MicroRow[] = [];
  const notes: string[] = [];
  for (const backend of ["file", "jetstream"] as const) {
    rows.push(await existsSection(o, backend));
    rows.push(await capacitySection(o, backend));
    if (backend !== "file") continue;
    rows.push(await rbuSection(o));
    const [inflight, note] = await inflightSection(o);
    rows.push(...inflight);
    if (note !== undefined) notes.push(note);
  }
  return { rows, notes };
}

// Medians over trials of each label, and the spread of `of[0] / of[1]` within each trial.
function row(head: Head, trials: Trial[], [a, b]: [string, string]): MicroRow {
  const medians = Object.keys(trials[0] ?? {}).map((
    l,
  ) => [l, median(trials.map((t) => t[l] ?? NaN))]);
  const { trials: _, ...spread } = ratios(trials.map((t) => [t[a], t[b]]));
  return { ...head, values: Object.fromEntries(medians), ratio: { of: `${a} / ${b}`, ...spread } };
}

const keysOf = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

// µs per call of each label, the calls alternating key by key so they share the disk's
// moment-to-moment fsync latency.
async function alternating(keys: readonly string[], calls: Record<string, Call>): Promise<Trial> {
  const total: Trial = {};
  for (const k of keys) {
    for (const [label, call] of Object.entries(calls)) {
      const t0 = performance.now();
      await call(k);
      total[label] = (total[label] ?? 0) + performance.now() - t0;
    }
  }
  return Object.fromEntries(Object.entries(total).map(([l, ms]) => [l, (ms * 1000) / keys.length]));
}

async function perOp(keys: readonly string[], fn: Call): Promise<number> {
  const t0 = performance.now();
  for (const k of keys) await fn(k);
  return ((performance.now() - t0) * 1000) / keys.length;
}

/** The library's store and the raw create over two fresh locations of `backend`. */
async function place(o: MicroOptions, backend: Backend) {
  const lib = await o.locations.fresh(backend);
  const raw = await o.locations.fresh(backend);
  const floor = backend === "file"
    ? fileRawTarget(raw.dir as string, ENTRIES)
    : await jetStreamRawTarget(o.nc as NatsConnection, raw.bucket as string, ENTRIES);
  return {
    store: await openStore(lib, o.nc),
    rawCreate: (key: string) => floor.create(key),
    seed: (keys: readonly string[]) =>
      Promise.all([lib, raw].map((l) => seed(l, keys, BODY, o.nc))),
    [Symbol.asyncDispose]: () =>
      Promise.all([lib, raw].map((l) => l[Symbol.asyncDispose]())).then(() => {}),
  };
}

async function existsSection(o: MicroOptions, backend: Backend): Promise<MicroRow> {
  const trials: Trial[] = [];
  const keys = keysOf("e", o.quick ? 50 : 200);
  await using p = await place(o, backend);
  await p.seed(keys);
  await perOp(keys.slice(0, 10), (k) => p.store.read(k)); // warm-up
  const existing = (k: string) =>
    p.store.create(k, DESCRIPTION, BODY).then(
      () => Promise.reject(new Error(`create of ${k} succeeded over an entry`)),
      (e) => (e as { code?: string }).code === "exists" ? undefined : Promise.reject(e),
    );
  for (let t = 0; t < o.trials; t++) {
    const read = await perOp(keys, (k) => p.store.read(k));
    trials.push({ "create (exists)": await perOp(keys, existing), read });
  }
  return row({ section: "exists", backend, unit: "µs/op" }, trials, ["create (exists)", "read"]);
}

async function capacitySection(o: MicroOptions, backend: Backend): Promise<MicroRow> {
  const batch = o.quick ? 16 : 48;
  const trials: Trial[] = [];
  for (let t = 0; t < o.trials; t++) {
    const v: Trial = {};
    for (const [label, seeded] of [["empty", 0], ["1,000", 1000 - batch]] as const) {
      await using p = await place(o, backend);
      await p.seed(keysOf("s", seeded));
      const { lib, raw } = await alternating(keysOf(`n${t}-`, batch), {
        lib: (k) => p.store.create(k, DESCRIPTION, BODY),
        raw: p.rawCreate,
      }) as { lib: number; raw: number };
      Object.assign(v, {
        [`create at ${label}`]: lib,
        [`raw at ${label}`]: raw,
        [`ratio at ${label}`]: lib / raw,
      });
    }
    trials.push(v);
  }
  return row({ section: "capacity", backend, unit: "µs/op" }, trials, [
    "ratio at 1,000",
    "ratio at empty",
  ]);
}

async function rbuSection(o: MicroOptions): Promise<MicroRow> {
  const keys = keysOf("u", o.quick ? 16 : 48);
  const trials: Trial[] = [];
  for (let t = 0; t < o.trials; t++) {
    await using onDir = await o.locations.fresh("file");
    await using offDir = await o.locations.fresh("file");
    await using rawDir = await o.locations.fresh("file");
    for (const l of [onDir, offDir, rawDir]) await seed(l, keys, BODY, o.nc);
    const on = await openStore(onDir, o.nc, true);
    const off = await openStore(offDir, o.nc);
    const scope = new Scope();
    for (const k of keys) await on.read(k, { scope });
    const dir = rawDir.dir as string;
    trials.push(
      await alternating(keys, {
        "update, readBeforeUpdate on": (k) => on.update(k, DESCRIPTION, UPDATE, { scope }),
        "update, option off": (k) => off.update(k, DESCRIPTION, UPDATE),
        "raw update": (k) => rawUpdate(dir, k, ENTRIES.updateBytes),
      }),
    );
  }
  const head = { section: "rbu", backend: "file", unit: "µs/op" } as const;
  return row(head, trials, ["update, readBeforeUpdate on", "raw update"]);
}

/** Opens a durable file store over a directory. */
type OpenFile = (dir: string) => Promise<Store>;

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

// Ops/s of `n` creates then `n` updates, 16 in flight, through what `open` returns for a fresh
// directory.
async function inflight(o: MicroOptions, n: number, open: (dir: string) => Promise<Writes>) {
  await using location = await o.locations.fresh("file");
  const writes = await open(location.dir as string);
  const keys = keysOf("k", n);
  const create = (n * 1000) / await inFlight(keys, 16, writes.create);
  return { create, update: (n * 1000) / await inFlight(keys, 16, writes.update) };
}

function library(open: OpenFile): (dir: string) => Promise<Writes> {
  return async (dir) => {
    const store = await open(dir);
    return {
      create: (k) => store.create(k, DESCRIPTION, BODY),
      update: (k) => store.update(k, DESCRIPTION, UPDATE),
    };
  };
}

// The floor shares directory fsyncs by group commit: one file fsync per write, one directory
// fsync per batch, no write acknowledged before a directory fsync that started after it.
function groupCommitFloor(dir: string): Promise<Writes> {
  const sync = groupCommit(dir);
  const create = (k: string) => rawCreate(dir, k, ENTRIES.createBytes, sync);
  return Promise.resolve({ create, update: (k) => rawUpdate(dir, k, ENTRIES.updateBytes, sync) });
}

// Without git (a shallow or exported tree), today's library cannot run beside the current one and
// the target is judged against the number recorded in bench/reference.json.
async function inflightSection(o: MicroOptions): Promise<[MicroRow[], string?]> {
  const ref = await referenceLibrary(o.work);
  const n = o.quick ? 64 : 512;
  const lib = library((dir) => openFileStore({ dir }));
  const runs: [string, (dir: string) => Promise<Writes>][] = [["library", lib], [
    "raw group commit",
    groupCommitFloor,
  ]];
  if (typeof ref !== "string") runs.push(["today's library", library(ref)]);
  for (const [, open] of runs.filter(([label]) => label !== "raw group commit")) {
    await inflight(o, 16, open); // warm-up
  }
  const trials = { create: [] as Trial[], update: [] as Trial[] };
  for (let t = 0; t < o.trials; t++) {
    const [create, update]: [Trial, Trial] = [{}, {}];
    for (let i = 0; i < runs.length; i++) {
      const [label, open] = runs[(i + t) % runs.length] as (typeof runs)[number];
      const r = await inflight(o, n, open);
      [create[label], update[label]] = [r.create, r.update];
    }
    trials.create.push(create);
    trials.update.push(update);
  }
  const of: [string, string] = [
    "library",
    typeof ref === "string" ? "raw group commit" : "today's library",
  ];
  const rows = (["create", "update"] as const)
    .map((op) =>
      row({ section: `inflight ${op}`, backend: "file", unit: "ops/s" }, trials[op], of)
    );
  return typeof ref === "string"
    ? [rows, `16 in flight: ${ref}; judged on bench/reference.json`]
    : [rows];
}
