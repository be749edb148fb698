// Searching a store's raw storage for a planted marker, as the redaction tests prove bytes gone:
// every file under a file store's directory, every message of a jetstream bucket's streams (its
// sidecar's included). A marker is text, or bytes (a vector the search keeps).

import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";

const ENCODER = new TextEncoder();

/** Every file under `dir` (recursively, dot names included) whose bytes hold `marker`. */
export async function fileHits(dir: string, marker: string | Uint8Array): Promise<string[]> {
  const want = typeof marker === "string" ? ENCODER.encode(marker) : marker;
  const out: string[] = [];
  const walk = async (path: string, rel: string) => {
    for await (const e of Deno.readDir(path)) {
      const p = `${path}/${e.name}`;
      const r = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory) await walk(p, r);
      else if (e.isFile && holds(await Deno.readFile(p), want)) out.push(r);
    }
  };
  await walk(dir, "");
  return out.sort();
}

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

function holds(bytes: Uint8Array, want: Uint8Array): boolean {
  outer: for (let i = 0; i + want.length <= bytes.length; i++) {
    for (let j = 0; j < want.length; j++) if (bytes[i + j] !== want[j]) continue outer;
    return true;
  }
  return false;
}
