// How the benchmark opens the library's jetstream store (flat keyspace, prefix "", defaults
// otherwise: read-before-update on, 5 s call timeout, on the worker's connection), and whether
// the file backend enforces the readBeforeUpdate option (older commits do not have it).

import type { NatsConnection } from "@nats-io/nats-core";
import { openFileStore, openJetStreamStore, Scope, type Store } from "../mod.ts";

/** Opens the library's jetstream store over a bucket. */
export function openLibraryJetStream(bucket: string, nc: NatsConnection): Promise<Store> {
  return openJetStreamStore({ bucket, prefix: "" }, { nc });
}

/** Whether this library's file backend enforces `readBeforeUpdate` (an older one may not). */
export async function rbuSupported(dir: string): Promise<boolean> {
  try {
    const open = openFileStore as unknown as (o: Record<string, unknown>) => Promise<Store>;
    const store = await open({ dir, readBeforeUpdate: true });
    await store.create("probe", "probe", "x");
    try {
      await store.update("probe", "probe", "y", { scope: new Scope() });
      return false;
    } catch (e) {
      return (e as { code?: string }).code === "stale";
    }
  } catch {
    return false;
  }
}
