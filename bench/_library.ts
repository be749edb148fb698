// How the benchmark opens the library's jetstream store (flat keyspace, prefix "", defaults
// otherwise: read-before-update on, 5 s call timeout, on the worker's connection), and whether
// the file backend enforces the readBeforeUpdate option (older commits do not have it), and the
// private nats-server a suite starts when it runs on its own.

import type { NatsConnection } from "@nats-io/nats-core";
import { openFileStore, openJetStreamStore, Scope, type Store } from "../mod.ts";
import { startNatsServer } from "../tests/_lib/nats_server.ts";

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

/**
 * Starts a private nats-server for a suite run on its own, stopped on SIGINT or SIGTERM too, so
 * an interrupted run leaves no server behind.
 */
export async function privateNatsServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const server = await startNatsServer();
  const onSignal = () => void server.stop().finally(() => Deno.exit(130));
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  return {
    url: server.url,
    stop() {
      Deno.removeSignalListener("SIGINT", onSignal);
      Deno.removeSignalListener("SIGTERM", onSignal);
      return server.stop();
    },
  };
}
