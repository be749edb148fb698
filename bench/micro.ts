// Single-process measurements, each a ratio taken within one trial (BENCH.md, "What runs"): an
// existing key's create against a read; a create at 1,000 entries against one in an empty store,
// each over the raw create; the readBeforeUpdate update against the raw one; what history costs
// (an update, a listing, history(key)); 16 writes in flight against today's library and the group-commit floor.
// Targets: bench/summarize.ts.

import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import { readdirSync, readFileSync } from "node:fs";
import {
  CapacityError,
  history,
  memoryTools,
  openFileStore,
  openJetStreamStore,
  runTool,
  Scope,
  type Store,
} from "../mod.ts";
import { Rng, TestEmbedder } from "../tests/harness.ts";
import { type Locations, openStore, seed } from "./_location.ts";
import type { Backend, Location } from "./_protocol.ts";
import process from "node:process";
import { fileRawTarget, groupCommit, inFlight, jetStreamRawTarget } from "./_raw.ts";
import { median, ratios, type Spread } from "./_stats.ts";
import { entriesOf, libraryTarget, type Target } from "./_target.ts";
import {
  createPartsSection,
  deletePartsSection,
  historyLengthSection,
  readPartsSection,
  updatePartsSection,
} from "./jetstream_parts.ts";
import { filePartsSections } from "./file_parts.ts";

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

type Nats = NatsConnection | undefined;
type Context = {
  quick: boolean;
  trials: number;
  work: string;
  locations: Locations;
  nc?: Nats;
  backends?: readonly Backend[];
};
type Trial = Record<string, number>;
type Open = (location: Location) => Promise<Target>;

const REFERENCE = new URL("./reference.json", import.meta.url);
const ENTRIES = entriesOf(1024);
const C = { exists: 0, stale: 0, retries: 0 };
const RBU = "update, readBeforeUpdate on";

/** Runs every section; `work` is a scratch directory today's library is extracted into. */
export async function runMicro(o: Context) {
  const [rows, notes]: [MicroRow[], string[]] = [[], []];
  for (const backend of o.backends ?? ["file", "jetstream"] as const) {
    rows.push(await existsSection(o, backend), await capacitySection(o, backend));
    if (backend === "file") rows.push(await readSection(o));
    if (backend === "file") rows.push(...await filePartsSections(o));
    if (backend === "file") rows.push(await rbuSection(o));
    rows.push(...await historySections(o, backend));
    if (backend === "file") rows.push(...await lengthSections(o));
    if (backend === "jetstream") {
      rows.push(await deletedSection(o), await fullSection(o), await createPartsSection(o));
      rows.push(
        await historyLengthSection(o),
        await updatePartsSection(o),
        await deletePartsSection(o),
        await readPartsSection(o),
        ...await inflightSection(o, { backend, notes }),
      );
    } else rows.push(...await searchSection(o), ...await inflightSection(o, { backend, notes }));
  }
  return { rows, notes };
}

// Medians over trials of each label, and the spread of `a / b` within each trial; the in-flight
// rows are ops/s, the others µs per op.
function row(section: string, backend: Backend, trials: Trial[], a: string, b: string): MicroRow {
  const labels = Object.keys(trials[0] ?? {});
  const values = Object.fromEntries(labels.map((l) => [l, median(trials.map((t) => t[l] ?? NaN))]));
  const { trials: _, ...spread } = ratios(trials.map((t) => [t[a], t[b]]));
  const unit = section.startsWith("inflight") ? "ops/s" : "µs/op";
  return { section, backend, unit, values, ratio: { of: `${a} / ${b}`, ...spread } };
}

const keysOf = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

// µs per call of each label over `keys`; `alternate`: the calls take turns key by key, so they
// share the disk's moment-to-moment fsync latency; otherwise each runs over every key in turn.
// `cpu`: also the process's CPU per call (`<label> CPU`, µs, user and system, every thread's).
type Calls = Record<string, (key: string) => Promise<unknown>>;

async function time(
  keys: string[],
  calls: Calls,
  o: { readonly alternate?: boolean; readonly cpu?: boolean } = {},
): Promise<Trial> {
  const { alternate = true, cpu = false } = o;
  const [total, used]: [Trial, Trial] = [{}, {}];
  const one = async (label: string, k: string) => {
    const [t0, c0] = [performance.now(), cpu ? process.cpuUsage() : undefined];
    await calls[label]?.(k);
    total[label] = (total[label] ?? 0) + performance.now() - t0;
    if (c0 === undefined) return;
    const c = process.cpuUsage(c0);
    used[label] = (used[label] ?? 0) + (c.user + c.system) / 1000;
  };
  const labels = Object.keys(calls);
  if (alternate) { for (const k of keys) for (const label of labels) await one(label, k); }
  else for (const label of labels) for (const k of keys) await one(label, k);
  const perOp = (t: Trial, l: string) => ((t[l] ?? 0) * 1000) / keys.length;
  return Object.fromEntries([
    ...labels.map((l) => [l, perOp(total, l)]),
    ...cpu ? labels.map((l) => [`${l} CPU`, perOp(used, l)]) : [],
  ]);
}

/** The library and the floor of `backend` over two fresh locations, each seeded with `keys`. */
async function pair(o: Context, backend: Backend, keys: string[], open?: Open) {
  const [lib, raw] = [await o.locations.fresh(backend), await o.locations.fresh(backend)];
  for (const l of [lib, raw]) await seed(l, keys, ENTRIES.createContent, o.nc);
  const library =
    await (open ?? ((l) => openStore(l, o.nc).then((s) => libraryTarget(s, ENTRIES, false))))(lib);
  const floor = backend === "file"
    ? fileRawTarget(raw.dir as string, ENTRIES)
    : await jetStreamRawTarget(o.nc as NatsConnection, raw.bucket as string, ENTRIES);
  const dispose = () => Promise.all([lib, raw].map((l) => l[Symbol.asyncDispose]()));
  return { library, floor, [Symbol.asyncDispose]: () => dispose().then(() => {}) };
}

async function existsSection(o: Context, backend: Backend): Promise<MicroRow> {
  const keys = keysOf("e", o.quick ? 50 : 200);
  await using p = await pair(o, backend, keys);
  const exists = async (k: string) => {
    if (await p.library.create(k)) throw new Error(`create of ${k} succeeded over an entry`);
  };
  await time(keys.slice(0, 10), { read: p.library.read }); // warm-up
  return await refusalRow(o, "exists", backend, () => keys, exists, p.library.read);
}

// A read in one process against the floor's (one readFileSync and a split), taking turns key by
// key over the same 200 entries of 1 KiB: the file backend's single-process read target.
async function readSection(o: Context): Promise<MicroRow> {
  const keys = keysOf("r", o.quick ? 50 : 200);
  await using p = await pair(o, "file", keys);
  const calls = { read: p.library.read, "raw read": p.floor.read };
  await time(keys, calls); // warm-up
  const trials: Trial[] = [];
  for (let t = 0; t < o.trials; t++) {
    const sum: Trial = {};
    for (let rep = 0; rep < (o.quick ? 2 : 20); rep++) {
      const one = await time(keys, calls);
      for (const [k, v] of Object.entries(one)) sum[k] = (sum[k] ?? 0) + v / (o.quick ? 2 : 20);
    }
    trials.push(sum);
  }
  return row("read", "file", trials, "read", "raw read");
}

// A refused create (`refused`) against a read, over the keys `keys(trial)` gives.
async function refusalRow(
  o: Context,
  section: string,
  backend: Backend,
  keys: (trial: number) => string[],
  refused: (key: string) => Promise<unknown>,
  read: (key: string) => Promise<unknown>,
): Promise<MicroRow> {
  const trials: Trial[] = [];
  for (let t = 0; t < o.trials; t++) {
    const { read: r, refused: c } = await time(keys(t), { read, refused }, { alternate: false });
    trials.push({ [`create (${section})`]: c as number, read: r as number });
  }
  return row(section, backend, trials, `create (${section})`, "read");
}

async function capacitySection(o: Context, backend: Backend): Promise<MicroRow> {
  const batch = o.quick ? 16 : 48;
  const trials: Trial[] = [];
  for (let t = 0; t < o.trials; t++) {
    const v: Trial = {};
    for (const [label, seeded] of [["empty", 0], ["1,000", 1000 - batch]] as const) {
      await using p = await pair(o, backend, keysOf("s", seeded));
      const calls = { lib: p.library.create, raw: p.floor.create };
      const { lib = NaN, raw = NaN } = await time(keysOf(`n${t}-`, batch), calls);
      Object.assign(v, { [`create at ${label}`]: lib, [`raw at ${label}`]: raw });
      v[`ratio at ${label}`] = lib / raw;
    }
    trials.push(v);
  }
  return row("capacity", backend, trials, "ratio at 1,000", "ratio at empty");
}

async function rbuSection(o: Context): Promise<MicroRow> {
  const keys = keysOf("u", o.quick ? 16 : 48);
  const trials: Trial[] = [];
  const checked: Open = async (l) => libraryTarget(await openStore(l, o.nc, true), ENTRIES, true);
  for (let t = 0; t < o.trials; t++) {
    await using on = await pair(o, "file", keys, checked);
    await using off = await pair(o, "file", keys);
    for (const k of keys) await on.library.read(k); // one Scope holds every key's revision
    trials.push(
      await time(keys, {
        [RBU]: (k) => on.library.update(k, C),
        "update, option off": (k) => off.library.update(k, C),
        "raw update": (k) => off.floor.update(k, C),
      }),
    );
  }
  return row("rbu", "file", trials, RBU, "raw update");
}

// What history costs: an update with it against one without (both durable), list() of entries
// with 20 versions each against entries with none, and history(key) of 64 versions against a
// read. On jetstream the bucket with history is one `bucket init` makes and the one without a
// NATS KV bucket of one message per key; its listing compares two buckets with history, the
// versions against keys written once.
async function historySections(o: Context, backend: Backend): Promise<MicroRow[]> {
  const js = backend === "jetstream";
  const [entries, versions] = o.quick ? [128, 4] : [1000, 20];
  const trials = { update: [] as Trial[], list: [] as Trial[], read: [] as Trial[] };
  const nc = o.nc as NatsConnection;
  const opened = async (history: boolean, keys: string[], durable = true) => {
    const location = await o.locations.fresh(backend, history);
    const s = js
      ? await openJetStreamStore({ bucket: location.bucket as string, prefix: "", history }, { nc })
      : await openFileStore({ dir: location.dir as string, history, durable });
    const scope = new Scope();
    await inBatches(keys, (k) => s.create(k, "with a history", ENTRIES.createContent, { scope }));
    return { s, scope, [Symbol.asyncDispose]: () => location[Symbol.asyncDispose]() };
  };
  const update = (h: { s: Store; scope: Scope }, v: number) => (k: string) =>
    h.s.update(k, "with a history", `${v}${k}`, { scope: h.scope });
  const [reps, listed] = [keysOf("rep", o.quick ? 10 : 40), keysOf("l", entries)];
  for (let t = 0; t < o.trials; t++) {
    const keys = keysOf("h", (o.quick ? 16 : 64) * (js ? 4 : 1));
    await using on = await opened(true, keys);
    await using off = await opened(false, keys);
    const updates = { "history on": update(on, t), "history off": update(off, t) };
    trials.update.push(await time(keys, updates, { cpu: true }));
    // Set-up without fsyncs on the file backend: listing reads the same files either way.
    await using kept = await opened(true, listed, false);
    await using none = await opened(js, listed, false);
    for (let v = 1; v < versions; v++) await inBatches(listed, update(kept, v));
    const lists = { [`${versions} versions`]: () => kept.s.list(), none: () => none.s.list() };
    trials.list.push(await time(reps, lists));
    for (let v = versions; v < 64; v++) await update(kept, v)("l0");
    const calls = { "history(key)": () => history(kept.s, "l0"), read: () => kept.s.read("l0") };
    trials.read.push(await time(reps, calls));
  }
  return [
    row("history update", backend, trials.update, "history on", "history off"),
    row("history list", backend, trials.list, `${versions} versions`, "none"),
    row("history read", backend, trials.read, "history(key)", "read"),
  ];
}

// What a key's history length costs its writes (issue 27): an update and a delete of a key with
// 5,000 versions against the same of a key with 5, durable, taking turns, in one store. The long
// history is written once (without fsyncs) and kept by the default retention (younger than 30
// days); each delete is undone by an untimed create.
async function lengthSections(o: Context): Promise<MicroRow[]> {
  const n = o.quick ? 200 : 5000;
  await using location = await o.locations.fresh("file", true);
  const dir = location.dir as string;
  const setup = await openFileStore({ dir, durable: false });
  for (const k of ["long", "short"]) {
    await setup.create(k, "a key's history", ENTRIES.createContent);
  }
  for (let v = 2; v <= n; v++) await setup.update("long", "a key's history", `${v}`);
  for (let v = 2; v <= 5; v++) await setup.update("short", "a key's history", `${v}`);
  const s = await openFileStore({ dir });
  const long = `${n.toLocaleString("en-US")} versions`;
  const [update, del] = [[] as Trial[], [] as Trial[]];
  const reps = keysOf("r", o.quick ? 8 : 40);
  for (let t = 0; t < o.trials; t++) {
    const write = (key: string) => () => s.update(key, "a key's history", `t${t}`);
    update.push(await time(reps, { [long]: write("long"), "5 versions": write("short") }));
    const remove = (key: string) => async () => {
      await s.delete(key);
      const t0 = performance.now();
      await s.create(key, "a key's history", ENTRIES.createContent);
      return performance.now() - t0;
    };
    // Timed: the delete alone (the create after it is subtracted).
    const timed: Trial = {};
    for (const label of [long, "5 versions"]) timed[label] = 0;
    for (const _ of reps) {
      for (const [label, key] of [[long, "long"], ["5 versions", "short"]] as const) {
        const t0 = performance.now();
        const create = await remove(key)();
        timed[label]! += performance.now() - t0 - create;
      }
    }
    for (const label of Object.keys(timed)) timed[label] = (timed[label]! * 1000) / reps.length;
    del.push(timed);
  }
  return [
    row("history length update", "file", update, long, "5 versions"),
    row("history length delete", "file", del, long, "5 versions"),
  ];
}

// `fn` on every key, 32 at a time.
async function inBatches(keys: string[], fn: (key: string) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < keys.length; i += 32) await Promise.all(keys.slice(i, i + 32).map(fn));
}

// list() of a prefix whose 3,000 deleted keys are still inside their retention (their versions in
// the history stream) against a clean prefix of the same bucket, both with history and 20 live
// entries (issue 18: without history the deletes' markers made such a listing 10.9x slower).
async function deletedSection(o: Context): Promise<MicroRow> {
  const nc = o.nc as NatsConnection;
  const trials: Trial[] = [];
  await using location = await o.locations.fresh("jetstream");
  const bucket = location.bucket as string;
  const [churned, clean] = await Promise.all(
    ["churned", "clean"].map((prefix) => openJetStreamStore({ bucket, prefix }, { nc })),
  ) as [Store, Store];
  const live = keysOf("live", 20);
  for (const s of [churned, clean]) await Promise.all(live.map((k) => s.create(k, "kept", "x")));
  const [cycles, lanes] = [3000, 16];
  await Promise.all(Array.from({ length: lanes }, async (_, lane) => {
    for (let i = lane; i < cycles; i += lanes) {
      await churned.create(`gone${i}`, "brief", "x");
      await churned.delete(`gone${i}`);
    }
  }));
  const listed = async (s: Store) => {
    if ((await s.list()).length !== live.length) throw new Error("a listing lost an entry");
  };
  // A delete's move runs after it answers, and its key's subject is emptied half a second later:
  // timed once the deleted keys' subjects hold nothing (a listing until then meets their markers).
  await settledSubjects(nc, { bucket, prefix: "churned", live: live.length });
  for (let t = 0; t < o.trials; t++) {
    const calls = { "3,000 deleted": () => listed(churned), clean: () => listed(clean) };
    trials.push(await time(keysOf("r", o.quick ? 10 : 40), calls));
  }
  return row("history deleted", "jetstream", trials, "3,000 deleted", "clean");
}

// Waits (at most a minute) until the bucket's stream holds only `live` subjects under `prefix`.
async function settledSubjects(
  nc: NatsConnection,
  o: { readonly bucket: string; readonly prefix: string; readonly live: number },
): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const filter = `$KV.${o.bucket}.${o.prefix}.>`;
  for (const end = Date.now() + 60_000; Date.now() < end;) {
    const info = await jsm.streams.info(`KV_${o.bucket}`, { subjects_filter: filter });
    if (Object.keys(info.state.subjects ?? {}).length <= o.live) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the deleted keys' subjects under ${o.prefix} were never emptied`);
}

// A create a full jetstream store refuses (1,024 entries, nothing written since its last count)
// against a read (issue 22: it used to cost a full count, some 60 reads).
async function fullSection(o: Context): Promise<MicroRow> {
  await using location = await o.locations.fresh("jetstream");
  await seed(location, keysOf("f", 1024), ENTRIES.createContent, o.nc);
  const store = await openStore(location, o.nc);
  const refused = (k: string) =>
    store.create(k, "d", "c").then(
      () => Promise.reject(new Error(`a full store took ${k}`)),
      (e) => e instanceof CapacityError ? undefined : Promise.reject(e),
    );
  await refused("warm-up");
  const keys = (t: number) => keysOf(`r${t}-`, o.quick ? 20 : 100);
  return await refusalRow(o, "full", "jetstream", keys, refused, () => store.read("f0"));
}

// memory_search on a full store (1,024 memories of 4 KiB of word-like text, through the tool as
// a model calls it) against the least a search of current text costs: every entry file read
// with readFileSync and scanned with indexOf for the query's first word. Target: under 50 ms.
// Hybrid (a deterministic embedder, 1,536 dimensions as OpenAI's small model; a new tool set per
// search, as a host makes one per run over its one store handle, the cache warm) against the
// keyword search: under 60 ms, and 1 + 1 texts embedded by the search after one write. Also each
// search on a handle of its own, opened before, as a new process: it hashes every memory and
// reads the warm sidecar.
async function searchSection(o: Context): Promise<MicroRow[]> {
  const random = new Rng(2_026); // a seeded vocabulary, some words far commoner than others
  const syllable = () => random.pick("ka lo mi ne su ta ri po de vu sha quo".split(" "));
  const words = Array.from({ length: 2_000 }, () => `${syllable()}${syllable()}${syllable()}`);
  const word = () => words[Math.floor(words.length * random.next() ** 2.5)] as string;
  const body = () => {
    let text = "";
    while (text.length < 4_084) text += word() + (random.next() < 0.08 ? ".\n" : " ");
    return text.slice(0, 4_096);
  };
  await using location = await o.locations.fresh("file");
  const dir = location.dir as string;
  const store = await openFileStore({ dir, durable: false });
  for (let i = 0; i < 1_024; i++) await store.create(`note.${i}`, `${word()} ${word()}`, body());
  const tools = memoryTools(store, { search: true });
  const query = `${words[3]} ${words[40]} ${words[700]}`;
  const search = async () => {
    if ((await runTool(tools, "memory_search", { query })).isError) throw new Error("search");
  };
  const holds = (n: string) => readFileSync(`${dir}/${n}`, "utf8").includes(words[3] as string);
  const floor = () =>
    Promise.resolve(readdirSync(dir).filter((n) => n.endsWith(".md") && holds(n)));
  const embedder = new TestEmbedder(1_536);
  const handles = new Map<string, Store>();
  const hybrid = (on?: Store) => async (key: string) => {
    const tools = memoryTools(on ?? handles.get(key)!, { search: { embed: embedder.embed } });
    if ((await runTool(tools, "memory_search", { query })).isError) throw new Error("hybrid");
  };
  const reps = keysOf("search", o.quick ? 5 : 30);
  await time(reps.slice(0, 3), { search, hybrid: hybrid(store) }); // and the sidecar's first fill
  const calls = {
    memory_search: search,
    "readFileSync + indexOf": floor,
    "hybrid memory_search": hybrid(store),
    "hybrid, new handle": hybrid(),
  };
  const trials: Trial[] = [];
  for (let t = 0; t < o.trials; t++) {
    for (const k of reps) handles.set(k, await openFileStore({ dir, durable: false }));
    trials.push(await time(reps, calls));
  }
  await store.update("note.7", "changed", body());
  const before = embedder.texts;
  await hybrid(store)("");
  const hybridRow = row("hybrid search", "file", trials, "hybrid memory_search", "memory_search");
  return [
    row("search", "file", trials, "memory_search", "readFileSync + indexOf"),
    {
      ...hybridRow,
      values: { ...hybridRow.values, "embedded after a write": embedder.texts - before },
    },
  ];
}

type Reference = {
  readonly openFileStore: typeof openFileStore;
  readonly openJetStreamStore: typeof openJetStreamStore;
  readonly Scope: new () => unknown;
};

async function referenceLibrary(work: string): Promise<Reference | string> {
  const { commit } = JSON.parse(await Deno.readTextFile(REFERENCE)) as { commit: string };
  const root = new URL("..", import.meta.url).pathname;
  const into = await Deno.makeTempDir({ dir: work, prefix: "reference-" });
  const failed = `today's library (${commit.slice(0, 7)}) could not be extracted from git`;
  try {
    const script = `git -C "$1" archive "$2" | tar -x -C "$3"`;
    const args = ["-c", script, "sh", root, commit, into];
    if (!(await new Deno.Command("sh", { args, stderr: "piped" }).output()).success) return failed;
    return await import(`file://${into}/mod.ts`) as Reference;
  } catch (e) {
    return `${failed}: ${e instanceof Error ? e.message : e}`;
  }
}

// Ops/s of `n` creates then `n` updates, 16 in flight, through what `open` makes of a fresh
// location (a bucket with history or a NATS KV bucket, as `history` says), and the process's CPU
// per op (µs, user and system, every thread's).
async function inflight(
  o: Context,
  r: { n: number; backend: Backend; history: boolean; open: (l: Location) => Promise<Target> },
) {
  await using location = await o.locations.fresh(r.backend, r.history);
  const target = await r.open(location);
  const keys = keysOf("k", r.n);
  const run = async (call: (k: string) => Promise<unknown>) => {
    const c0 = process.cpuUsage();
    const ms = await inFlight(keys, 16, call);
    const c = process.cpuUsage(c0);
    return { opsPerS: (r.n * 1000) / ms, cpu: (c.user + c.system) / r.n };
  };
  return {
    create: await run((k) => target.create(k)),
    update: await run((k) => target.update(k, C)),
  };
}

// 16 writes in flight through one handle: the library, today's library (the commit in
// bench/reference.json, before history; on jetstream over a NATS KV bucket) and the floor (file:
// sharing directory fsyncs by group commit, bench/_raw.ts; jetstream: `kv.create`/`kv.update`).
// Without git (a shallow or exported tree), today's library cannot run beside the current one:
// the file rows are then judged against the number bench/reference.json holds, the jetstream rows
// against the floor, reported.
async function inflightSection(
  o: Context,
  x: { backend: Backend; notes: string[] },
): Promise<MicroRow[]> {
  const { backend, notes } = x;
  const js = backend === "jetstream";
  const ref = await referenceLibrary(o.work);
  const n = o.quick ? 64 : 512;
  const nc = o.nc as NatsConnection;
  const target = (store: Store) => libraryTarget(store, ENTRIES, js);
  const floorLabel = js ? "raw" : "raw group commit";
  type Run = { history: boolean; open: (l: Location) => Promise<Target> };
  const runs: [string, Run][] = [
    ["library", { history: true, open: async (l) => target(await openStore(l, nc)) }],
    [floorLabel, {
      history: !js,
      open: (l) =>
        js
          ? jetStreamRawTarget(nc, l.bucket as string, ENTRIES)
          : Promise.resolve(fileRawTarget(l.dir as string, ENTRIES, groupCommit(l.dir as string))),
    }],
  ];
  if (typeof ref !== "string") {
    const open = async (l: Location) =>
      js
        ? libraryTarget(
          await ref.openJetStreamStore({ bucket: l.bucket as string, prefix: "" }, { nc }),
          ENTRIES,
          () => new ref.Scope(),
        )
        : target(await ref.openFileStore({ dir: l.dir as string }));
    runs.push(["today's library", { history: false, open }]);
  }
  const at = (run: Run, size: number) => inflight(o, { n: size, backend, ...run });
  // Warm-up: the first writes through each library.
  for (const [label, run] of runs) if (label !== floorLabel) await at(run, 16);
  const trials = { create: [] as Trial[], update: [] as Trial[] };
  for (let t = 0; t < o.trials; t++) {
    const [create, update]: [Trial, Trial] = [{}, {}];
    for (let i = 0; i < runs.length; i++) {
      const [label, run] = runs[(i + t) % runs.length] as (typeof runs)[number];
      const r = await at(run, n);
      [create[label], update[label]] = [r.create.opsPerS, r.update.opsPerS];
      [create[`${label} CPU µs/op`], update[`${label} CPU µs/op`]] = [r.create.cpu, r.update.cpu];
    }
    trials.create.push(create);
    trials.update.push(update);
  }
  const of = typeof ref === "string" ? floorLabel : "today's library";
  if (typeof ref === "string") {
    notes.push(
      `16 in flight (${backend}): ${ref}; ${
        js ? "reported against the floor" : "judged on bench/reference.json"
      }`,
    );
  }
  return (["create", "update"] as const)
    .map((op) => row(`inflight ${op}`, backend, trials[op], "library", of));
}
