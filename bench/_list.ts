// Listing strategies, each timed once over a location seeded with entries.
//
// - `file`: the library's `list()`.
// - `file-headers`: the floor (bench/_raw.ts): one `readDirSync` pass, the first KiB of each
//   entry, decode, find the description line.
// - `file-bodies`: what a list that reads bodies costs: `readFileSync` of every entry.
// - `jetstream`: the library's `list()`.
// - `jetstream-watch`: one pass of a `kv.watch()` over the bucket's last values, no parsing.
// - `jetstream-keys-get`: the naive listing: `kv.keys()`, then one `kv.get()` per key.

import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import { openFileStore, type Store } from "../mod.ts";
import type { ListCommand, ListResult } from "./_protocol.ts";
import type { JetStreamOpener } from "./_jetstream_targets.ts";
import { rawList } from "./_raw.ts";

const CLOSE = new TextEncoder().encode("\n---\n");

/** Runs one listing and measures its time and the bytes the process read meanwhile. */
export async function listOnce(
  command: ListCommand,
  nc: NatsConnection | undefined,
  openJetStream: JetStreamOpener,
): Promise<ListResult> {
  const { method, location } = command;
  let run: () => Promise<number>;
  if (method.startsWith("file")) {
    const dir = location.dir;
    if (dir === undefined) throw new Error(`List method ${method} needs a directory`);
    if (method === "file") {
      const store: Store = await openFileStore({ dir });
      run = async () => (await store.list()).length;
    } else if (method === "file-headers") {
      run = () => Promise.resolve(rawList(dir).length);
    } else {
      run = () => Promise.resolve(listBodies(dir));
    }
  } else {
    const bucket = location.bucket;
    if (bucket === undefined || nc === undefined) {
      throw new Error(`List method ${method} needs a bucket and a NATS connection`);
    }
    if (method === "jetstream") {
      const store = await openJetStream(bucket, nc);
      run = async () => (await store.list()).length;
    } else {
      const kv = await new Kvm(nc).open(bucket);
      await kv.status();
      run = method === "jetstream-watch"
        ? async () => {
          let n = 0;
          for await (const entry of await kv.watch()) {
            if (entry.operation === "PUT") n++;
            if (entry.delta === 0) break;
          }
          return n;
        }
        : async () => {
          const keys: string[] = [];
          for await (const key of await kv.keys()) keys.push(key);
          let n = 0;
          for (const key of keys) if ((await kv.get(key))?.operation === "PUT") n++;
          return n;
        };
    }
  }
  const before = readChars();
  const t0 = performance.now();
  const entries = await run();
  const ms = performance.now() - t0;
  const after = readChars();
  // Socket reads do not show in rchar, so bytes are only meaningful for files.
  const bytesRead = before < 0 || after < 0 || !method.startsWith("file") ? -1 : after - before;
  if (entries !== command.expect) {
    throw new Error(`List method ${method} saw ${entries} entries, expected ${command.expect}`);
  }
  return { method, ms, bytesRead, entries };
}

// Bytes this process has read through read(2) and friends so far; -1 off Linux.
function readChars(): number {
  try {
    const text = Deno.readTextFileSync("/proc/self/io");
    const match = /^rchar:\s*(\d+)/m.exec(text);
    return match ? Number(match[1]) : -1;
  } catch {
    return -1;
  }
}

function listBodies(dir: string): number {
  let n = 0;
  for (const e of Deno.readDirSync(dir)) {
    if (!e.isFile || !e.name.endsWith(".md") || e.name.startsWith(".")) continue;
    const bytes = Deno.readFileSync(`${dir}/${e.name}`);
    if (indexOf(bytes, CLOSE) >= 0) n++;
  }
  return n;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
