// How the benchmark reaches the library's jetstream backend.

import type { NatsConnection } from "@nats-io/nats-core";
import * as memory from "../mod.ts";
import type { JetStreamOpener } from "./_jetstream_targets.ts";

type OpenJetStreamStore = (
  options: { bucket: string; prefix?: string },
  deps: { nc: NatsConnection },
) => Promise<memory.Store>;

/** Whether this checkout's library exports the jetstream backend yet. */
export function hasJetStreamLibrary(): boolean {
  return typeof (memory as Record<string, unknown>).openJetStreamStore === "function";
}

/** Opens the library's jetstream store over a bucket, flat keyspace, defaults otherwise. */
export function jetStreamOpener(): Promise<JetStreamOpener> {
  const open = (memory as Record<string, unknown>).openJetStreamStore as
    | OpenJetStreamStore
    | undefined;
  if (open === undefined) {
    return Promise.reject(new Error("This checkout's mod.ts does not export openJetStreamStore"));
  }
  return Promise.resolve((bucket, nc) => open({ bucket, prefix: "" }, { nc }));
}
