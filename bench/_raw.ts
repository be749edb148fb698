// The floors (BENCH.md, "Floors and baselines"): the fastest way to do each job on Deno without
// the library, so a target says how far the library is from what the runtime allows, not from a
// copy of the library's code. The file floor reads with one `readFileSync`, lists with one
// directory pass and the first KiB of each entry, and writes durably with a temp file, fsync,
// `link` (create) or `rename` (update) and a directory fsync, shared by group commit when 16 are
// in flight; no validation, symlink checks, capacity or telemetry. The jetstream floor is
// `@nats-io/kv` on the worker's connection, keeping the library's guarantees by hand.

import { existsSync } from "node:fs";
import { JetStreamApiError } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { type Entries, retrying, type Target, unless } from "./_target.ts";
import { kvm } from "./_location.ts";

const DECODER = new TextDecoder();
const HEAD_BYTES = 1024;
// A deliberate bug for the benchmark's own test (tests/bench_test.ts).
const FAULT_CREATE_ALWAYS_WINS = Deno.env.get("AGENTMEM_BENCH_FAULT") === "create-always-wins";

/** Reads one entry file whole and splits header from body; returns the body's length. */
export function rawRead(path: string): number {
  const text = DECODER.decode(Deno.readFileSync(path));
  const end = text.indexOf("\n---\n", 4);
  if (end < 0) throw new Error("No header");
  return text.length - end - 5;
}

/** One directory pass plus the first KiB of each `.md` entry: every key and description. */
export function rawList(dir: string): { key: string; description: string }[] {
  const out: { key: string; description: string }[] = [];
  const buf = new Uint8Array(HEAD_BYTES);
  for (const e of Deno.readDirSync(dir)) {
    if (!e.isFile || !e.name.endsWith(".md") || e.name.startsWith(".")) continue;
    using file = Deno.openSync(`${dir}/${e.name}`);
    const head = DECODER.decode(buf.subarray(0, file.readSync(buf) ?? 0));
    const at = head.indexOf("description: ");
    const description = head.slice(at + 13, head.indexOf("\n", at));
    out.push({ key: e.name.slice(0, -3), description });
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Flushes a directory (its entries) to disk. */
export async function syncDir(dir: string): Promise<void> {
  using handle = Deno.openSync(dir, { read: true });
  await handle.sync();
}

/**
 * Group commit, the obvious way: a caller waits for a directory fsync that starts after its
 * call. One runs at a time; everyone who asks while it runs shares the next one.
 */
export function groupCommit(dir: string): () => Promise<void> {
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const start = () => {
    next = undefined;
    running = syncDir(dir).finally(() => (running = undefined));
    return running;
  };
  return () => running === undefined ? start() : (next ??= running.then(start));
}

async function stage(dir: string, key: string, bytes: Uint8Array): Promise<string> {
  const temp = `${dir}/.${key}.${crypto.randomUUID()}.tmp`;
  using file = Deno.openSync(temp, { write: true, createNew: true, mode: 0o600 });
  for (let off = 0; off < bytes.length;) off += file.writeSync(bytes.subarray(off));
  await file.syncData();
  return temp;
}

/**
 * The file floors over `dir` as a target. `sync` flushes the directory: by default one fsync per
 * write; `groupCommit(dir)` for many writes in flight.
 */
export function fileRawTarget(dir: string, entries: Entries, sync = () => syncDir(dir)): Target {
  const path = (key: string) => `${dir}/${key}.md`;
  // The fault makes every create claim its key, so the "one winner" invariant must break.
  const exists = FAULT_CREATE_ALWAYS_WINS;
  return {
    async create(key) {
      // Look before staging: a key that exists costs one stat, not a durable write. `link`
      // stays the arbiter when two creates race past the look.
      if (existsSync(path(key))) return exists;
      const temp = await stage(dir, key, entries.createBytes);
      try {
        Deno.linkSync(temp, path(key));
      } catch (e) {
        if (e instanceof Deno.errors.AlreadyExists) return exists;
        throw e;
      } finally {
        Deno.removeSync(temp);
      }
      await sync();
      return true;
    },
    async update(key) {
      Deno.renameSync(await stage(dir, key, entries.updateBytes), path(key));
      await sync();
    },
    read: (key) => Promise.resolve(rawRead(path(key)) === entries.valueSize),
    async delete(key) {
      try {
        Deno.removeSync(path(key));
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return false;
        throw e;
      }
      await sync();
      return true;
    },
    increment: () => Promise.reject(new Error("file-raw does not run the counter")),
  };
}

/** Runs `fn` over `items` with at most `width` calls in flight; resolves to the elapsed ms. */
export async function inFlight<T>(items: T[], width: number, fn: (item: T) => Promise<unknown>) {
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return performance.now() - t0;
}

// "wrong last sequence" (10071): the key exists (create) or moved on (update, delete).
const isWrongLastSequence = (e: unknown) => e instanceof JetStreamApiError && e.code === 10071;

/** The floor over `bucket`, on the worker's connection. */
export async function jetStreamRawTarget(nc: NatsConnection, bucket: string, entries: Entries) {
  const kv = await kvm(nc).open(bucket);
  await kv.status(); // bind now, as the library does at construction
  const revisions = new Map<string, number>();
  const readInto = async (key: string) => {
    const entry = await kv.get(key);
    if (entry?.operation !== "PUT") throw new Error(`Key "${key}" is missing`);
    revisions.set(key, entry.revision);
    return entry.value;
  };
  // A revision-checked update of what was read last; `reread` reads it again first.
  const replace = async (key: string, bytes: Uint8Array, reread = false) => {
    if (reread) await readInto(key);
    revisions.set(key, await kv.update(key, bytes, revisions.get(key) as number));
  };
  const target: Target = {
    async create(key) {
      const created = kv.create(key, entries.createBytes);
      const revision = await created.catch((e) => isWrongLastSequence(e) ? 0 : Promise.reject(e));
      if (revision > 0) revisions.set(key, revision);
      return revision > 0;
    },
    async update(key, c) {
      if (!revisions.has(key)) await readInto(key);
      const attempt = (retry: boolean) => replace(key, entries.updateBytes, retry);
      await retrying(unless(isWrongLastSequence, attempt), c);
    },
    read: async (key) => entries.isWrittenBytes(await readInto(key)),
    // Deletes only what was just read, so exactly one of several concurrent deleters sees `true`.
    async delete(key) {
      revisions.delete(key);
      let deleted = false;
      const attempt = async () => {
        const entry = await kv.get(key);
        if (entry?.operation !== "PUT") return;
        await kv.delete(key, { previousSeq: entry.revision });
        deleted = true;
      };
      await retrying(unless(isWrongLastSequence, attempt));
      return deleted;
    },
    async increment(key, c) {
      const attempt = async () => {
        const n = Number(DECODER.decode((await readInto(key)).subarray(entries.headerBytes)));
        await replace(key, entries.bytesOf(String(n + 1)));
      };
      await retrying(unless(isWrongLastSequence, attempt), c);
    },
  };
  return target;
}
