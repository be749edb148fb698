// A Store made of raw @nats-io/kv calls (get, create, revision-checked update and delete), for
// nemesis runs where the library refuses the setup: a replicated bucket on nats-server 2.9.10.
// It has the library's outward behaviour (typed errors, a deadline, scope revisions) and none of
// its checks, so a run with it measures the server, not the library.

import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream } from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import {
  type CallOptions,
  type Entry,
  ExistsError,
  MemoryError,
  NotFoundError,
  parseEntry,
  serializeEntry,
  StaleError,
  type Store,
  UnavailableError,
} from "../../mod.ts";

const WRONG_LAST_SEQUENCE = 10071;

function code(e: unknown): number | undefined {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === "number" ? c : undefined;
}

// Settles with `work`, or fails as unavailable after `ms`; any untyped failure is unavailable.
async function deadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  work.catch(() => {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new UnavailableError(`Cannot ${what}: no answer within ${ms} ms`)),
          ms,
        );
      }),
    ]);
  } catch (e) {
    if (e instanceof MemoryError) throw e;
    throw new UnavailableError(`Cannot ${what}: ${e instanceof Error ? e.name : "failed"}`);
  } finally {
    clearTimeout(timer);
  }
}

/** Opens a raw-kv store over `bucket` under `prefix`. */
export async function openRawStore(
  nc: NatsConnection,
  opts: { bucket: string; prefix: string; timeout: number },
): Promise<Store> {
  const kv: KV = await new Kvm(jetstream(nc, { timeout: opts.timeout })).open(opts.bucket);
  await deadline(kv.status(), 10_000, `open bucket ${opts.bucket}`);
  const ns = `raw:${opts.bucket}/${opts.prefix}`;
  const k = (key: string) => `${opts.prefix}.${key}`;
  const t = opts.timeout;
  return {
    info: () => ({ backend: "raw-kv", location: `${opts.bucket}/${opts.prefix}` }),
    list: () => Promise.reject(new UnavailableError("Cannot list: the raw-kv store does not list")),
    read: (key: string, o?: CallOptions): Promise<Entry> =>
      deadline(
        (async () => {
          const e = await kv.get(k(key));
          if (e === null || e.operation !== "PUT") {
            throw new NotFoundError(`Cannot read memory "${key}": no memory has this key`, { key });
          }
          o?.scope?.record(ns, key, e.revision);
          return parseEntry(e.value, key);
        })(),
        t,
        `read ${key}`,
      ),
    create: (key: string, description: string, content: string, o?: CallOptions) =>
      deadline(
        (async () => {
          try {
            // Not inside `o?.scope?.record(...)`: without a scope, optional chaining would skip
            // the write itself.
            const revision = await kv.create(k(key), serializeEntry(description, content));
            o?.scope?.record(ns, key, revision);
          } catch (e) {
            if (code(e) === WRONG_LAST_SEQUENCE) {
              throw new ExistsError(`Cannot create memory "${key}": it already exists`, { key });
            }
            throw e;
          }
        })(),
        t,
        `create ${key}`,
      ),
    update: (key: string, description: string, content: string, o?: CallOptions) =>
      deadline(
        (async () => {
          const seen = o?.scope?.revision(ns, key);
          if (seen === undefined) {
            throw new StaleError(`Cannot update memory "${key}": this run has not read it`, {
              key,
            });
          }
          try {
            const data = serializeEntry(description, content);
            const revision = await kv.update(k(key), data, seen);
            o?.scope?.record(ns, key, revision);
          } catch (e) {
            if (code(e) === WRONG_LAST_SEQUENCE) {
              throw new StaleError(`Cannot update memory "${key}": it changed`, { key });
            }
            throw e;
          }
        })(),
        t,
        `update ${key}`,
      ),
    delete: (key: string, o?: CallOptions) => {
      o?.scope?.forget(ns, key);
      return deadline(
        (async () => {
          for (let attempt = 0; attempt < 8; attempt++) {
            const e = await kv.get(k(key));
            if (e === null || e.operation !== "PUT") return false;
            try {
              await kv.delete(k(key), { previousSeq: e.revision });
              return true;
            } catch (err) {
              if (code(err) !== WRONG_LAST_SEQUENCE) throw err;
            }
          }
          throw new UnavailableError(`Cannot delete memory "${key}": it kept changing`, { key });
        })(),
        t,
        `delete ${key}`,
      );
    },
  };
}
