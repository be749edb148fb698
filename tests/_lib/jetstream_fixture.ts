// A private nats-server with one bucket, and stores over it, for the jetstream tests.

import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import { type KV, Kvm, type KvOptions } from "@nats-io/kv";
import {
  createJetStreamBucket,
  JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  type JetStreamDeps,
  type JetStreamStoreOptions,
  openJetStreamStore,
  type Store,
} from "../../mod.ts";
import { natsConnect, type NatsServer, needsNats, startNatsServer } from "./nats_server.ts";

export const BUCKET = "memory";

/** How many subjects (live keys and markers) `BUCKET`'s stream holds under `prefix`. */
export async function subjects(nc: NatsConnection, prefix: string): Promise<number> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(`KV_${BUCKET}`, {
    subjects_filter: `$KV.${BUCKET}.${prefix}.>`,
  });
  return Object.keys(info.state.subjects ?? {}).length;
}

/** A server, an admin connection with the raw bucket, and a way to open stores over it. */
export interface NatsFixture extends AsyncDisposable {
  readonly server: NatsServer;
  /** The test's own connection, for raw bucket access. */
  readonly nc: NatsConnection;
  /** The raw bucket `BUCKET`, for planting and inspecting what a store wrote. */
  readonly kv: KV;
  /**
   * Opens a store over `BUCKET` on a connection of its own (as another process would): with
   * history in a bucket made for it, with `history: false` in one made the NATS KV way. `deps`
   * are added to the connection (a clock, say).
   */
  open(
    options?: Partial<JetStreamStoreOptions>,
    deps?: Omit<JetStreamDeps, "nc">,
  ): Promise<Store>;
  /** A new connection to the server, closed by cleanup. */
  connect(): Promise<NatsConnection>;
  /** How many consumers the bucket's stream has. */
  consumers(): Promise<number>;
  cleanup(): Promise<void>;
}

/**
 * Starts a server, creates `BUCKET` and returns the fixture. With no `bucket` settings the bucket
 * is made by `createJetStreamBucket`, with what history needs; with settings (or
 * `{ history: false }`) it is made the NATS KV way with them (one message per key), and stores
 * open with history off.
 */
export async function natsFixture(
  bucket: Partial<KvOptions> = {},
  options: { readonly history?: boolean } = {},
): Promise<NatsFixture> {
  const history = options.history ?? Object.keys(bucket).length === 0;
  const server = await startNatsServer();
  const connections: NatsConnection[] = [];
  const connect = async () => {
    const c = await natsConnect(server.url);
    connections.push(c);
    return c;
  };
  try {
    const nc = await connect();
    let kv: KV;
    if (history) {
      await historyBucket(nc, BUCKET, { maxValueSize: bucket.maxValueSize });
      kv = await new Kvm(nc).open(BUCKET);
    } else kv = await new Kvm(nc).create(BUCKET, { history: 1, ...bucket });
    const cleanup = async () => {
      await Promise.all(connections.map((c) => c.close().catch(() => {})));
      await server.stop();
    };
    return {
      server,
      nc,
      kv,
      open: async (options = {}, deps = {}) =>
        openJetStreamStore({
          bucket: BUCKET,
          prefix: "run",
          ...(history ? {} : { history: false }),
          ...options,
        }, { ...deps, nc: await connect() }),
      connect,
      consumers: async () => {
        const jsm = await jetstreamManager(nc);
        return (await jsm.consumers.list(`KV_${BUCKET}`).next()).length;
      },
      cleanup,
      [Symbol.asyncDispose]: cleanup,
    };
  } catch (e) {
    await Promise.all(connections.map((c) => c.close().catch(() => {})));
    await server.stop();
    throw e;
  }
}

/** Registers a jetstream test: named `[jetstream] ...`, skipped (loudly) without a nats-server. */
export function jetstreamTest(name: string, fn: () => Promise<void>): void {
  Deno.test({
    name: `[jetstream] ${name}`,
    ...needsNats(),
    sanitizeOps: false,
    sanitizeResources: false,
    fn,
  });
}

/**
 * Makes `bucket` as `agentmem bucket init` does, with what history needs: file storage, the
 * smallest max value size history takes (unless given), one replica unless told.
 */
export function historyBucket(
  nc: NatsConnection,
  bucket: string,
  o: { readonly replicas?: number; readonly maxValueSize?: number | undefined } = {},
): Promise<unknown> {
  return createJetStreamBucket(nc, {
    bucket,
    replicas: o.replicas ?? 1,
    storage: "file",
    maxValueSize: o.maxValueSize ?? JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  });
}
