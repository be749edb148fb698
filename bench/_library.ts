// How the benchmark opens the library's jetstream store: flat keyspace (prefix ""), defaults
// otherwise (read-before-update on, 5 s call timeout), on the worker's connection.

import { openJetStreamStore } from "../mod.ts";
import type { JetStreamOpener } from "./_jetstream_targets.ts";

/** Opens the library's jetstream store over a bucket. */
export const openLibraryJetStream: JetStreamOpener = (bucket, nc) =>
  openJetStreamStore({ bucket, prefix: "" }, { nc });
