// How the benchmark opens the library's jetstream store: flat keyspace (prefix ""), defaults
// otherwise (read-before-update on, 5 s call timeout), on the worker's connection.

import type { NatsConnection } from "@nats-io/nats-core";
import { openJetStreamStore, type Store } from "../mod.ts";

/** Opens the library's jetstream store over a bucket. */
export function openLibraryJetStream(bucket: string, nc: NatsConnection): Promise<Store> {
  return openJetStreamStore({ bucket, prefix: "" }, { nc });
}
