// The jetstream backend and its baseline.
//
// - `jetstream`: the library's store over a bucket, flat keyspace, read-before-update on. Each
//   worker keeps one Scope per run, as one agent run would.
// - `jetstream-raw`: `@nats-io/kv` calls on the same connection, keeping the same guarantees by
//   hand: `create` for a create, a revision-checked `update` (re-read and retry on a wrong
//   revision), `get` for a read, a revision-checked delete, the same serialized bytes.

import { JetStreamApiError } from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import { Scope, StaleError, type Store } from "../mod.ts";
import { type Conflicts, DESCRIPTION, type Entries, type Target } from "./_target.ts";

// "wrong last sequence": the key exists (create) or moved on (update, delete).
const WRONG_LAST_SEQUENCE = 10071;
const MAX_ATTEMPTS = 10_000;
const DECODER = new TextDecoder();

/** Opens a jetstream store the way the library does; injected so the bench can run without it. */
export type JetStreamOpener = (bucket: string, nc: NatsConnection) => Promise<Store>;

/** The library's jetstream store over `bucket`. */
export async function openJetStreamLibrary(
  open: JetStreamOpener,
  nc: NatsConnection,
  bucket: string,
  entries: Entries,
): Promise<Target> {
  const store = await open(bucket, nc);
  const scope = new Scope();
  const opts = { scope };
  // Keys this run holds a revision for, so an update of a key it never saw reads it first (the
  // raw baseline does the same with its own map).
  const known = new Set<string>();
  const readInto = async (key: string) => {
    const entry = await store.read(key, opts);
    known.add(key);
    return entry;
  };
  const replace = async (key: string, content: string, c: Conflicts) => {
    if (!known.has(key)) await readInto(key);
    for (let attempt = 1;; attempt++) {
      try {
        await store.update(key, DESCRIPTION, content, opts);
        return;
      } catch (e) {
        if (!(e instanceof StaleError) || attempt >= MAX_ATTEMPTS) throw e;
        c.stale++;
        c.retries++;
        await readInto(key);
      }
    }
  };
  return {
    name: "jetstream",
    async create(key) {
      try {
        await store.create(key, DESCRIPTION, entries.createContent, opts);
        known.add(key);
        return true;
      } catch (e) {
        if ((e as { code?: unknown }).code === "exists") return false;
        throw e;
      }
    },
    update: (key, c) => replace(key, entries.updateContent, c),
    async read(key) {
      return entries.isWrittenContent((await readInto(key)).content);
    },
    async delete(key) {
      known.delete(key);
      return await store.delete(key, opts);
    },
    async increment(key, c) {
      for (let attempt = 1;; attempt++) {
        const n = Number((await readInto(key)).content);
        try {
          await store.update(key, DESCRIPTION, String(n + 1), opts);
          return;
        } catch (e) {
          if (!(e instanceof StaleError) || attempt >= MAX_ATTEMPTS) throw e;
          c.stale++;
          c.retries++;
        }
      }
    },
    seed: (keys, content, valueSize) => seedBucket(nc, bucket, keys, content, valueSize, entries),
    async snapshot(bodiesOf) {
      const keys = (await store.list()).map((item) => item.key);
      const values: Record<string, string> = {};
      for (const key of bodiesOf) values[key] = (await store.read(key)).content;
      return { keys, values };
    },
    close: () => Promise.resolve(),
  };
}

/** The raw `@nats-io/kv` baseline over `bucket`, on the worker's connection. */
export async function openJetStreamRaw(
  nc: NatsConnection,
  bucket: string,
  entries: Entries,
): Promise<Target> {
  const kv = await new Kvm(nc).open(bucket);
  await kv.status(); // bind now, as the library does at construction
  const revisions = new Map<string, number>();
  const readInto = async (key: string) => {
    const entry = await kv.get(key);
    if (entry === null || entry.operation !== "PUT") throw new Error(`Key "${key}" is missing`);
    revisions.set(key, entry.revision);
    return entry.value;
  };
  return {
    name: "jetstream-raw",
    async create(key) {
      try {
        revisions.set(key, await kv.create(key, entries.createBytes));
        return true;
      } catch (e) {
        if (isWrongLastSequence(e)) return false;
        throw e;
      }
    },
    async update(key, c) {
      if (!revisions.has(key)) await readInto(key);
      for (let attempt = 1;; attempt++) {
        try {
          const revision = revisions.get(key) as number;
          revisions.set(key, await kv.update(key, entries.updateBytes, revision));
          return;
        } catch (e) {
          if (!isWrongLastSequence(e) || attempt >= MAX_ATTEMPTS) throw e;
          c.stale++;
          c.retries++;
          await readInto(key);
        }
      }
    },
    async read(key) {
      return entries.isWrittenBytes(await readInto(key));
    },
    async delete(key) {
      revisions.delete(key);
      return await deleteIfPresent(kv, key);
    },
    async increment(key, c) {
      for (let attempt = 1;; attempt++) {
        const value = await readInto(key);
        const n = Number(DECODER.decode(value.subarray(entries.headerBytes)));
        try {
          const revision = revisions.get(key) as number;
          revisions.set(key, await kv.update(key, entries.bytesOf(String(n + 1)), revision));
          return;
        } catch (e) {
          if (!isWrongLastSequence(e) || attempt >= MAX_ATTEMPTS) throw e;
          c.stale++;
          c.retries++;
        }
      }
    },
    seed: (keys, content, valueSize) => seedBucket(nc, bucket, keys, content, valueSize, entries),
    async snapshot(bodiesOf) {
      const keys: string[] = [];
      for await (const key of await kv.keys()) keys.push(key);
      keys.sort();
      const values: Record<string, string> = {};
      for (const key of bodiesOf) {
        values[key] = DECODER.decode((await readInto(key)).subarray(entries.headerBytes));
      }
      return { keys, values };
    },
    close: () => Promise.resolve(),
  };
}

// Deletes `key` only if it holds a value, so exactly one of several concurrent deleters sees
// `true`: the delete is conditional on the revision just read.
async function deleteIfPresent(kv: KV, key: string): Promise<boolean> {
  for (let attempt = 1;; attempt++) {
    const entry = await kv.get(key);
    if (entry === null || entry.operation !== "PUT") return false;
    try {
      await kv.delete(key, { previousSeq: entry.revision });
      return true;
    } catch (e) {
      if (!isWrongLastSequence(e) || attempt >= MAX_ATTEMPTS) throw e;
    }
  }
}

function isWrongLastSequence(e: unknown): boolean {
  return e instanceof JetStreamApiError && e.code === WRONG_LAST_SEQUENCE;
}

/** Writes fixture entries with plain puts (set-up, not measured). */
export async function seedBucket(
  nc: NatsConnection,
  bucket: string,
  keys: readonly string[],
  content: string | undefined,
  valueSize: number,
  entries: Entries,
): Promise<void> {
  const kv = await new Kvm(nc).open(bucket);
  const bytes = entries.bytesOf(content ?? "s".repeat(valueSize));
  // A window of puts in flight keeps the set-up short without flooding the server.
  const WINDOW = 64;
  for (let i = 0; i < keys.length; i += WINDOW) {
    await Promise.all(keys.slice(i, i + WINDOW).map((key) => kv.put(key, bytes)));
  }
}
