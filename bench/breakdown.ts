// Where the library's time goes: each step of a store call timed on its own, next to the whole
// call and the raw baseline, in one process. A diagnostic for the targets `deno task bench`
// reports; run it with `deno run -A bench/breakdown.ts [--rounds N]`.
//
// Cases of one group run in rotating order, round after round; each figure is the median over
// rounds of the mean time per call, in microseconds.

import { closeSync, constants as FS, fstatSync, openSync, readSync } from "node:fs";
import { open } from "node:fs/promises";
import { parseArgs } from "node:util";
import { JetStreamApiError } from "@nats-io/jetstream";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { parse, stringify } from "yaml";
import { openFileStore, openJetStreamStore, parseEntry, Scope, serializeEntry } from "../mod.ts";
import { natsServerBinary, startNatsServer } from "../tests/_nats_server.ts";
import { table } from "./_report.ts";
import { median } from "./_stats.ts";
import { DESCRIPTION } from "./_target.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { rounds: { type: "string" }, calls: { type: "string" } },
});
const ROUNDS = Number(values.rounds ?? 7);
const CALLS = Number(values.calls ?? 200);
const BODY = "c".repeat(1024);
const ENTRY = new TextEncoder().encode(serializeEntry(DESCRIPTION, BODY));
const HEADER = stringify({ description: DESCRIPTION }, { lineWidth: 0, minContentWidth: 0 });
const KEYS = Array.from({ length: 64 }, (_, i) => `k${i}`);

type Case = (i: number) => Promise<unknown> | unknown;

async function measure(
  title: string,
  cases: Record<string, Case>,
  calls = CALLS,
): Promise<void> {
  const names = Object.keys(cases);
  const samples = new Map<string, number[]>(names.map((n) => [n, []]));
  for (const name of names) for (let i = 0; i < calls / 4; i++) await cases[name]!(i); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    const order = [...names.slice(round % names.length), ...names.slice(0, round % names.length)];
    for (const name of order) {
      const fn = cases[name]!;
      const t0 = performance.now();
      for (let i = 0; i < calls; i++) await fn(i);
      samples.get(name)!.push(((performance.now() - t0) * 1000) / calls);
    }
  }
  console.log(`\n### ${title}\n`);
  console.log(
    table(
      ["step", "µs per call"],
      names.map((n) => [n, median(samples.get(n)!).toFixed(1)]),
      [false, true],
    ),
  );
}

async function fileCases(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "agentmem-breakdown-" });
  try {
    const store = await openFileStore({ dir });
    for (const key of KEYS) await store.create(key, DESCRIPTION, BODY);
    const path = (i: number) => `${dir}/${KEYS[i % KEYS.length]}.md`;
    const flags = FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK | FS.O_NOCTTY;
    // The backend's read: lstat, open without following, fstat, one read of the file's size.
    const readSyncCalls = (i: number) => {
      Deno.lstatSync(path(i));
      const fd = openSync(path(i), flags);
      try {
        const buf = new Uint8Array(fstatSync(fd).size);
        readSync(fd, buf, 0, buf.length, 0);
        return buf;
      } finally {
        closeSync(fd);
      }
    };
    // The same system calls made through Deno's asynchronous APIs.
    const readAsyncCalls = async (i: number) => {
      await Deno.lstat(path(i));
      const fh = await open(path(i), flags);
      try {
        const buf = new Uint8Array((await fh.stat()).size);
        await fh.read(buf, 0, buf.length, 0);
        return buf;
      } finally {
        await fh.close();
      }
    };
    await measure("file read (1 KiB body, 64 keys)", {
      "baseline: the backend's system calls, synchronous": readSyncCalls,
      "library: store.read": (i) => store.read(KEYS[i % KEYS.length]!),
      "the same calls made asynchronously": readAsyncCalls,
      "reference: Deno.readFile (follows links)": (i) => Deno.readFile(path(i)),
      "Deno.lstatSync": (i) => Deno.lstatSync(path(i)),
      "Deno.lstat (async)": (i) => Deno.lstat(path(i)),
      "parseEntry (UTF-8 decode, header, checks)": () => parseEntry(ENTRY),
      "yaml parse of the header alone (the fallback)": () =>
        parse(HEADER, { schema: "core", maxAliasCount: 0, prettyErrors: false }),
    });

    let n = 0;
    const fresh = () => `n${n++}`;
    const big = await Deno.makeTempDir({ prefix: "agentmem-breakdown-" });
    for (let i = 0; i < 1000; i++) await Deno.writeFile(`${big}/e${i}.md`, ENTRY);
    const count = (d: string) => {
      let c = 0;
      for (const e of Deno.readDirSync(d)) if (e.isFile && e.name.endsWith(".md")) c++;
      return c;
    };
    await measure("file writes (1 KiB body)", {
      "baseline: raw update (lstat, stage, fsync, rename, dir fsync)": (i) =>
        rawWrite(dir, path(i)),
      "library: store.update": (i) => store.update(KEYS[i % KEYS.length]!, DESCRIPTION, BODY),
      "serializeEntry": () => serializeEntry(DESCRIPTION, BODY),
      "YAML stringify of the header (the fallback)": () =>
        stringify({ description: DESCRIPTION }, { lineWidth: 0, minContentWidth: 0 }),
      "a capacity count: readDirSync of 64 entries": () => count(dir),
      "a capacity count: readDirSync of 1,000 entries": () => count(big),
      "library: store.create of a new key (64+ keys)": async () => {
        const key = fresh();
        await store.create(key, DESCRIPTION, BODY);
        Deno.removeSync(`${dir}/${key}.md`);
      },
      "baseline: raw create of a new key (64+ keys)": async () => {
        const key = fresh();
        await rawWrite(dir, `${dir}/${key}.md`, true);
        Deno.removeSync(`${dir}/${key}.md`);
      },
    });
    await Deno.remove(big, { recursive: true });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function rawWrite(dir: string, path: string, create = false): Promise<void> {
  if (!create) Deno.lstatSync(path);
  const temp = `${dir}/.t${crypto.randomUUID()}.tmp`;
  const f = Deno.openSync(temp, { write: true, createNew: true });
  f.writeSync(ENTRY);
  await f.sync();
  f.close();
  if (create) {
    Deno.linkSync(temp, path);
    Deno.removeSync(temp);
  } else {
    Deno.renameSync(temp, path);
  }
  const d = Deno.openSync(dir, { read: true });
  await d.sync();
  d.close();
}

async function jetStreamCases(): Promise<void> {
  if (natsServerBinary() === undefined) {
    console.log("\n(nats-server not found: jetstream cases skipped)");
    return;
  }
  await using server = await startNatsServer();
  const nc = await connect({ servers: server.url });
  try {
    const kvm = new Kvm(nc);
    await kvm.create("breakdown", { history: 1 });
    // Bound with open(), as the library binds: gets go to the stream leader, not direct gets.
    const raw = await kvm.open("breakdown");
    for (const key of KEYS) await raw.put(key, ENTRY);
    const store = await openJetStreamStore({ bucket: "breakdown", prefix: "" }, { nc });
    const scope = new Scope();
    for (const key of KEYS) await store.read(key, { scope });
    const revisions = new Map<string, number>();
    for (const key of KEYS) revisions.set(key, (await raw.get(key))!.revision);
    const big = await kvm.create("breakdown_big", { history: 1 });
    for (let i = 0; i < 1024; i += 64) {
      await Promise.all(
        Array.from({ length: 64 }, (_, j) => big.put(`e${i + j}`, ENTRY)),
      );
    }
    const jsm = await jetstreamManager(nc);
    const key = (i: number) => KEYS[i % KEYS.length]!;
    let n = 0;
    await measure("jetstream (1 KiB body, 64 keys)", {
      "baseline: kv.get": (i) => raw.get(key(i)),
      "library: store.read": (i) => store.read(key(i), { scope }),
      "baseline: kv.update at the known revision": async (i) => {
        // The library's updates move revisions too; re-read on a stale one, untimed in spirit.
        try {
          revisions.set(key(i), await raw.update(key(i), ENTRY, revisions.get(key(i))!));
        } catch (e) {
          if (!(e instanceof JetStreamApiError)) throw e;
          revisions.set(key(i), (await raw.get(key(i)))!.revision);
        }
      },
      "library: store.update (scope holds the revision)": async (i) => {
        try {
          await store.update(key(i), DESCRIPTION, BODY, { scope });
        } catch {
          await store.read(key(i), { scope });
        }
      },
      "capacity count: stream info with subjects, 64+ keys": () =>
        jsm.streams.info("KV_breakdown", { subjects_filter: "$KV.breakdown.>" }),
      "capacity count: stream info with subjects, 1,024 keys": () =>
        jsm.streams.info("KV_breakdown_big", { subjects_filter: "$KV.breakdown_big.>" }),
      "stream info without subjects (num_subjects), 1,024 keys": () =>
        jsm.streams.info("KV_breakdown_big"),
    });
    // Few calls: every create adds a key, and the bucket holds at most 1,024.
    await measure("jetstream create (1 KiB body, 64 to 700 keys)", {
      "baseline: kv.create of a new key": () => raw.create(`r${n++}`, ENTRY),
      "library: store.create of a new key": () =>
        store.create(`l${n++}`, DESCRIPTION, BODY, { scope }),
    }, 40);
    const bigStore = await openJetStreamStore({ bucket: "breakdown_big", prefix: "" }, { nc });
    const entries: Uint8Array[] = [];
    for await (const e of await big.watch()) {
      entries.push(e.value);
      if (e.delta === 0) break;
    }
    await measure("jetstream list of 1,024 entries (1 KiB bodies), per list", {
      "library: store.list": () => bigStore.list(),
      "baseline: one watch pass": async () => {
        for await (const e of await big.watch()) if (e.delta === 0) break;
      },
      "parseEntry of 1,024 entries": () => {
        for (const v of entries) parseEntry(v);
      },
    }, 4);
  } finally {
    await nc.close();
  }
}

await fileCases();
await jetStreamCases();
