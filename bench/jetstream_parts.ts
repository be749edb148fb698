// Jetstream single-process rows: what a create is made of, each part timed next to the others key
// by key (the floor's create alone; the floor with what the library adds, an exact count and the
// read of what a new version chains to beside it, then the create; the library's create); an
// update of a key with 5,000 versions against one with 5; what an update, a delete and a read are
// made of.

import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import type { Locations } from "./_location.ts";
import type { Location } from "./_protocol.ts";
import { kvm, openStore } from "./_location.ts";
import { median, ratios, type Spread } from "./_stats.ts";
import { Scope } from "../mod.ts";
import { entriesOf } from "./_target.ts";

/** One row, as bench/micro.ts's `MicroRow` (not imported: micro.ts imports this file). */
interface MicroRow {
  readonly section: string;
  readonly backend: "jetstream";
  readonly unit: "µs/op";
  readonly values: Record<string, number>;
  readonly ratio: Omit<Spread, "trials"> & { readonly of: string };
}

const ENTRIES = entriesOf(1024);
const DESCRIPTION = "bench";

/** Where a section runs, and how long. */
interface PartsOptions {
  readonly quick: boolean;
  readonly trials: number;
  readonly locations: Locations;
  readonly nc?: NatsConnection | undefined;
}

type Calls = Record<string, (key: string) => Promise<unknown>>;

/**
 * Times `calls` key by key in turn (each key through every call, `reps` times over the keys), in a
 * fresh bucket per trial that `setUp` prepares; µs per op, medians over trials, and the ratio of
 * the `ratio` pair's labels.
 */
async function partsRow(o: PartsOptions, x: {
  readonly section: string;
  readonly ratio: readonly [string, string];
  readonly reps?: number;
  readonly setUp: (bucket: { location: Location; t: number; keys: string[] }) => Promise<Calls>;
}): Promise<MicroRow> {
  const reps = x.reps ?? 1;
  const trials: Record<string, number>[] = [];
  for (let t = 0; t < o.trials; t++) {
    await using location = await o.locations.fresh("jetstream");
    const keys = Array.from({ length: o.quick ? 30 : 300 }, (_, i) => `${t}-${i}`);
    const calls = await x.setUp({ location, t, keys });
    const total: Record<string, number> = {};
    for (let rep = 0; rep < reps; rep++) {
      for (const key of keys) {
        for (const [label, call] of Object.entries(calls)) {
          const t0 = performance.now();
          await call(key);
          total[label] = (total[label] ?? 0) + performance.now() - t0;
        }
      }
    }
    const n = keys.length * reps;
    trials.push(Object.fromEntries(Object.entries(total).map(([l, ms]) => [l, (ms * 1000) / n])));
  }
  return rowOf(x.section, trials, x.ratio);
}

// A section's row: each label's median over `trials`, and the spread of `over / under`.
function rowOf(
  section: string,
  trials: Record<string, number>[],
  [over, under]: readonly [string, string],
): MicroRow {
  const labels = Object.keys(trials[0] ?? {});
  const values = Object.fromEntries(labels.map((l) => [l, median(trials.map((t) => t[l]!))]));
  const { trials: _, ...spread } = ratios(trials.map((t) => [t[over], t[under]]));
  return {
    section,
    backend: "jetstream",
    unit: "µs/op",
    values,
    ratio: { of: `${over} / ${under}`, ...spread },
  };
}

/** The create's parts, µs per op, and the library's time over the floor with those parts. */
export async function createPartsSection(o: PartsOptions): Promise<MicroRow> {
  const nc = o.nc as NatsConnection;
  const jsm = await jetstreamManager(nc);
  return await partsRow(o, {
    section: "create parts",
    ratio: ["library create", "raw + count + link"],
    setUp: async ({ location }) => {
      const bucket = location.bucket as string;
      const store = await openStore(location, nc);
      const kv = await kvm(nc).open(bucket);
      return {
        "library create": (key) => store.create(`l${key}`, DESCRIPTION, ENTRIES.createContent),
        "raw create": (key) => kv.create(`r${key}`, ENTRIES.createBytes),
        "raw + count + link": async (key) => {
          await Promise.all([
            jsm.streams.info(`KV_${bucket}`),
            jsm.direct.getMessage(`KVH_${bucket}`, { last_by_subj: `$KVH.${bucket}.p${key}` }),
          ]);
          await kv.create(`p${key}`, ENTRIES.createBytes);
        },
      };
    },
  });
}

/**
 * An update of a key with 5,000 versions against one of a key with 5 (issue 27: cost independent
 * of history length), key by key in turn, through one handle with the default retention.
 */
export async function historyLengthSection(o: PartsOptions): Promise<MicroRow> {
  const nc = o.nc as NatsConnection;
  await using location = await o.locations.fresh("jetstream");
  const store = await openStore(location, nc, true);
  const scope = new Scope();
  const write = (key: string, i: number) =>
    store.update(key, DESCRIPTION, `${ENTRIES.updateContent.slice(8)}${i}`, { scope });
  const long = o.quick ? 500 : 5_000;
  for (const key of ["long", "short"]) {
    await store.create(key, DESCRIPTION, ENTRIES.createContent, { scope });
  }
  for (let i = 1; i < long; i++) await write("long", i);
  for (let i = 1; i < 5; i++) await write("short", i);
  // Timed once the long key's versions have moved (its moves run after the updates answer).
  const jsm = await jetstreamManager(nc);
  const subject = `$KV.${location.bucket}.long`;
  for (const end = Date.now() + 60_000; Date.now() < end;) {
    const info = await jsm.streams.info(`KV_${location.bucket}`, { subjects_filter: subject });
    if ((info.state.subjects?.[subject] ?? 0) <= 16) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const trials: Record<string, number>[] = [];
  for (let t = 0; t < o.trials; t++) {
    const total: Record<string, number> = {};
    const n = o.quick ? 16 : 64;
    for (let i = 0; i < n; i++) {
      for (const key of ["long", "short"]) {
        const t0 = performance.now();
        await write(key, i);
        total[key] = (total[key] ?? 0) + performance.now() - t0;
      }
    }
    const label = (key: string) =>
      key === "long" ? `${long.toLocaleString("en-US")} versions` : "5 versions";
    trials.push(
      Object.fromEntries(Object.entries(total).map(([k, ms]) => [label(k), (ms * 1000) / n])),
    );
  }
  return rowOf("history length update", trials, Object.keys(trials[0]!) as [string, string]);
}

// A fresh bucket with `n` keys made through the library (`l<key>`, with the run's scope) and
// through `kv` (`r<key>`, its revisions kept); disposing of it removes the bucket.
async function pairedKeys(o: PartsOptions, k: { readonly prefix: string; readonly n: number }) {
  const nc = o.nc as NatsConnection;
  const location = await o.locations.fresh("jetstream");
  const bucket = location.bucket as string;
  const store = await openStore(location, nc, true);
  const kv = await kvm(nc).open(bucket);
  const scope = new Scope();
  const keys = Array.from({ length: k.n }, (_, i) => `${k.prefix}${i}`);
  const revisions = new Map<string, number>();
  for (const key of keys) {
    await store.create(`l${key}`, DESCRIPTION, ENTRIES.createContent, { scope });
    revisions.set(key, await kv.create(`r${key}`, ENTRIES.createBytes));
  }
  return {
    bucket,
    store,
    kv,
    scope,
    keys,
    revisions,
    [Symbol.asyncDispose]: () => location[Symbol.asyncDispose](),
  };
}

/**
 * What a jetstream update is made of, in one process: the library's update of a key this run read
 * against `kv.update` at the revision it knows, key by key in turn, many rounds over few keys (so
 * each key's versions move every 16, as under the contention benchmark), with the requests each
 * side sends per update (the library's moves included) and the client's CPU per update.
 */
export async function updatePartsSection(o: PartsOptions): Promise<MicroRow> {
  const nc = o.nc as NatsConnection;
  const [n, rounds] = o.quick ? [8, 8] : [32, 32];
  const trials: Record<string, number>[] = [];
  for (let t = 0; t < o.trials; t++) {
    await using b = await pairedKeys(o, { prefix: "u", n });
    const { bucket, store, kv, scope, keys, revisions } = b;
    // Requests and publishes (not their answers) to the bucket's streams and the API, by side.
    const sent = { library: 0, raw: 0 };
    const rawSubject = `$KV.${bucket}.r`;
    const sub = nc.subscribe(">", {
      callback: (_, m) => {
        if (m.subject.startsWith(rawSubject)) sent.raw++;
        else if (/^\$(JS\.API|KV|KVH)\./.test(m.subject)) sent.library++;
      },
    });
    await nc.flush();
    const total = { library: 0, raw: 0 };
    const cpu = { library: 0, raw: 0 };
    const calls = {
      library: (key: string, i: number) =>
        store.update(`l${key}`, DESCRIPTION, `${ENTRIES.updateContent.slice(8)}${i}`, { scope }),
      raw: async (key: string) =>
        void revisions.set(
          key,
          await kv.update(`r${key}`, ENTRIES.updateBytes, revisions.get(key)!),
        ),
    };
    for (let i = 0; i < rounds; i++) {
      for (const key of keys) {
        for (
          const side of i % 2 === 0 ? ["library", "raw"] as const : ["raw", "library"] as const
        ) {
          const [c0, t0] = [process.cpuUsage(), performance.now()];
          await calls[side](key, i);
          total[side] += performance.now() - t0;
          const c = process.cpuUsage(c0);
          cpu[side] += c.user + c.system;
        }
      }
    }
    await nc.flush();
    sub.unsubscribe();
    const ops = n * rounds;
    trials.push({
      "library update": (total.library * 1000) / ops,
      "raw update": (total.raw * 1000) / ops,
      "library requests per update": sent.library / ops,
      "raw requests per update": sent.raw / ops,
      "library CPU per update": cpu.library / ops,
      "raw CPU per update": cpu.raw / ops,
    });
  }
  return rowOf("update parts", trials, ["library update", "raw update"]);
}

/**
 * What a jetstream delete costs, in one process: its answer against the floor's (a look, then a
 * revision-checked delete), and what its move does after it answered (requests per delete, and
 * the time until every deleted key's history is in the history stream), over keys of 9 versions.
 */
export async function deletePartsSection(o: PartsOptions): Promise<MicroRow> {
  const nc = o.nc as NatsConnection;
  const jsm = await jetstreamManager(nc);
  const n = o.quick ? 20 : 100;
  const trials: Record<string, number>[] = [];
  for (let t = 0; t < o.trials; t++) {
    await using b = await pairedKeys(o, { prefix: "d", n });
    const { bucket, store, kv, scope, keys } = b;
    for (const key of keys) {
      for (let v = 0; v < 8; v++) {
        await store.update(`l${key}`, DESCRIPTION, `${ENTRIES.updateContent}${v}`, { scope });
        await kv.put(`r${key}`, ENTRIES.updateBytes);
      }
    }
    let requests = 0;
    // Requests and publishes (not their answers), but this section's own look at the history.
    const counted = (subject: string) =>
      /^\$(JS\.API|KV|KVH)\./.test(subject) && !subject.includes(`INFO.KVH_${bucket}`);
    const sub = nc.subscribe(">", { callback: (_, m) => void (counted(m.subject) && requests++) });
    await nc.flush();
    const t0 = performance.now();
    for (const key of keys) await store.delete(`l${key}`, { scope });
    const answered = performance.now();
    // The moves run after the deletes answered: until every key's history holds its delete.
    for (const end = Date.now() + 60_000; Date.now() < end;) {
      const info = await jsm.streams.info(`KVH_${bucket}`, {
        subjects_filter: `$KVH.${bucket}.>`,
      });
      if (Object.keys(info.state.subjects ?? {}).length >= n) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const moved = performance.now();
    await nc.flush();
    sub.unsubscribe();
    const r0 = performance.now();
    for (const key of keys) {
      const entry = await kv.get(`r${key}`);
      await kv.delete(`r${key}`, { previousSeq: entry!.revision });
    }
    const raw = performance.now();
    trials.push({
      "library delete": ((answered - t0) * 1000) / n,
      "raw delete": ((raw - r0) * 1000) / n,
      "moves after, per delete": ((moved - answered) * 1000) / n,
      "requests per delete": requests / n,
    });
  }
  return rowOf("delete parts", trials, ["library delete", "raw delete"]);
}

/**
 * What a jetstream read is made of, in one process, key by key in turn: the floor (`kv.get`), the
 * one request the library makes for it (a direct get of the subject's last message, which reads
 * the server's latest write, as `kv.get` does), and the library's read through the store with a
 * run's scope (validation, the entry's parse, the revision and taint the scope records).
 */
export async function readPartsSection(o: PartsOptions): Promise<MicroRow> {
  const nc = o.nc as NatsConnection;
  const jsm = await jetstreamManager(nc);
  return await partsRow(o, {
    section: "read parts",
    ratio: ["library read", "kv.get"],
    reps: 3,
    setUp: async ({ location, keys }) => {
      const bucket = location.bucket as string;
      const store = await openStore(location, nc);
      const kv = await kvm(nc).open(bucket);
      const scope = new Scope();
      for (const key of keys) {
        await store.create(key, DESCRIPTION, ENTRIES.createContent, { scope });
      }
      return {
        "library read": (key) => store.read(key, { scope }),
        "kv.get": (key) => kv.get(key),
        "direct get": (key) =>
          jsm.direct.getMessage(`KV_${bucket}`, { last_by_subj: `$KV.${bucket}.${key}` }),
      };
    },
  });
}
