// The jetstream floor: `@nats-io/kv` calls on the worker's connection, keeping the library's
// guarantees by hand: `create` for a create, a revision-checked `update` (re-read and retry on a
// wrong revision), `get` for a read, a revision-checked delete, the same serialized bytes.

import { JetStreamApiError } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import { type Entries, retrying, type Target, unless } from "./_target.ts";

// "wrong last sequence": the key exists (create) or moved on (update, delete).
const WRONG_LAST_SEQUENCE = 10071;
const DECODER = new TextDecoder();

function isWrongLastSequence(e: unknown): boolean {
  return e instanceof JetStreamApiError && e.code === WRONG_LAST_SEQUENCE;
}

/** The floor over `bucket`, on the worker's connection. */
export async function jetStreamRawTarget(
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
  const replace = async (key: string, bytes: Uint8Array) => {
    revisions.set(key, await kv.update(key, bytes, revisions.get(key) as number));
  };
  return {
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
      const attempt = async (retry: boolean) => {
        if (retry) await readInto(key);
        await replace(key, entries.updateBytes);
      };
      await retrying(unless(isWrongLastSequence, attempt), c);
    },
    read: async (key) => entries.isWrittenBytes(await readInto(key)),
    // Deletes only what was just read, so exactly one of several concurrent deleters sees `true`.
    async delete(key) {
      revisions.delete(key);
      let deleted = false;
      const attempt = async () => {
        const entry = await kv.get(key);
        if (entry === null || entry.operation !== "PUT") return;
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
}
