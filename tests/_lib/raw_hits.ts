// Searching a store's raw storage for a planted marker, as the redaction tests prove bytes gone:
// every file under a file store's directory, every message of a jetstream bucket's streams (its
// sidecar's included). A marker is text, or bytes (a vector the search keeps).

import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import { holds } from "./file_hits.ts";

export { fileHits } from "./file_hits.ts";

const ENCODER = new TextEncoder();

/** Every message of `bucket`'s streams (the bucket's, its history's, review's, sidecar's) holding it. */
export async function streamHits(
  nc: NatsConnection,
  bucket: string,
  marker: string | Uint8Array,
): Promise<string[]> {
  const want = typeof marker === "string" ? ENCODER.encode(marker) : marker;
  const jsm = await jetstreamManager(nc);
  const out: string[] = [];
  for (const name of [`KV_${bucket}`, `KVH_${bucket}`, `KVR_${bucket}`, `KVS_${bucket}`]) {
    const si = await jsm.streams.info(name).catch(() => undefined);
    if (si === undefined) continue;
    for (let seq = si.state.first_seq; seq <= si.state.last_seq && si.state.messages > 0; seq++) {
      const m = await jsm.streams.getMessage(name, { seq }).catch(() => null);
      if (m === null) continue;
      const headers = [...(m.header?.keys() ?? [])].map((k) => m.header!.get(k)).join("\n");
      if (holds(m.data, want) || holds(ENCODER.encode(headers), want)) {
        out.push(`${name}#${seq} ${m.subject}`);
      }
    }
  }
  return out;
}
