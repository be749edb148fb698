// Where a run's data lives: a fresh directory or bucket per run, seeded untimed, opened through
// the library's public openers, removed afterwards.

import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import {
  createJetStreamBucket,
  JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  openFileStore,
  openJetStreamStore,
  serializeEntry,
} from "../mod.ts";
import type { Backend, Location } from "./_protocol.ts";

/**
 * The bench's bound on one call, the library's and the floor's alike: a call that takes this long
 * is a hang and fails the run. The library's default (5 s) is not it: on 2 cores at a load average
 * of 10 and more a jetstream create of the main runs once took longer and failed `--quick`. Calls
 * slower than that default are counted (bench/summarize.ts, `SLOW_MS`) and named in the notes, so
 * a loaded run says so.
 */
export const CALL_TIMEOUT_MS = 60_000;

/** The NATS KV client over `nc`, its requests bounded by `CALL_TIMEOUT_MS`. */
export function kvm(nc: NatsConnection): Kvm {
  return new Kvm(jetstream(nc, { timeout: CALL_TIMEOUT_MS }));
}

/** The description every benchmark entry carries. */
export const DESCRIPTION = "Benchmark entry: a note one worker wrote for another to read";

/** Fresh locations under a scratch directory and a bucket-name prefix. */
export type Locations = ReturnType<typeof freshLocations>;

/** Makes fresh locations under `work` and bucket names starting with `prefix`. */
export function freshLocations(work: string, nc: NatsConnection | undefined, prefix: string) {
  let seq = 0;
  /**
   * A fresh directory (file), bucket (jetstream), or both (a peer's place); removed on dispose.
   * A bucket is made with history (as `agentmem bucket init` does), or with `history: false` the
   * NATS KV way, one message per key.
   */
  const fresh = async (backend?: Backend, history = true): Promise<Location & AsyncDisposable> => {
    const n = seq++;
    const dir = backend === "jetstream" ? undefined : `${work}/run-${n}`;
    const bucket = backend === "file" ? undefined : `${prefix}_${n}`;
    if (dir !== undefined) await Deno.mkdir(dir, { recursive: true });
    if (bucket !== undefined) await makeBucket(needNats(nc), bucket, history);
    const dispose = async () => {
      if (dir !== undefined) await Deno.remove(dir, { recursive: true }).catch(() => {});
      if (bucket === undefined) return;
      const jsm = await jetstreamManager(needNats(nc));
      const gone = (stream: string) => jsm.streams.delete(stream).catch(() => {});
      await Promise.all([gone(`KV_${bucket}`), gone(`KVH_${bucket}`)]);
    };
    const where = {
      ...dir === undefined ? {} : { dir },
      ...bucket === undefined ? {} : { bucket },
    };
    return { ...where, [Symbol.asyncDispose]: dispose };
  };
  return { fresh };
}

// A bucket as `agentmem bucket init` makes it, or without history the NATS KV way.
function makeBucket(nc: NatsConnection, bucket: string, history: boolean): Promise<unknown> {
  if (!history) return kvm(nc).create(bucket, { history: 1 });
  const maxValueSize = JETSTREAM_HISTORY_MIN_VALUE_SIZE;
  const settings = { bucket, replicas: 1, storage: "file", maxValueSize } as const;
  return createJetStreamBucket(nc, settings, { timeout: CALL_TIMEOUT_MS });
}

/** The NATS connection, or an error saying there is none. */
export function needNats(nc: NatsConnection | undefined): NatsConnection {
  if (nc === undefined) throw new Error("No NATS connection");
  return nc;
}

/** Writes entries holding `body` under `keys` with plain writes or puts (set-up, not measured). */
export async function seed(location: Location, keys: string[], body: string, nc?: NatsConnection) {
  const bytes = new TextEncoder().encode(serializeEntry(DESCRIPTION, body));
  if (location.dir !== undefined) {
    for (const key of keys) await Deno.writeFile(`${location.dir}/${key}.md`, bytes);
    return;
  }
  const kv = await kvm(needNats(nc)).open(location.bucket as string);
  // A window of puts in flight keeps the set-up short without flooding the server.
  for (let i = 0; i < keys.length; i += 64) {
    await Promise.all(keys.slice(i, i + 64).map((key) => kv.put(key, bytes)));
  }
}

/**
 * The library's store over `location`: a file store over its directory, else a jetstream store
 * over its bucket (flat keyspace, defaults otherwise: read-before-update on), each call bounded by
 * `CALL_TIMEOUT_MS`.
 */
export function openStore(location: Location, nc?: NatsConnection, readBeforeUpdate = false) {
  const { dir, bucket = "" } = location;
  if (dir !== undefined) return openFileStore({ dir, readBeforeUpdate });
  const timeout = CALL_TIMEOUT_MS;
  return openJetStreamStore({ bucket, prefix: "", timeout }, { nc: needNats(nc) });
}
