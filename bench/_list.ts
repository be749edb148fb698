// Listing strategies, each timed once over a location seeded with entries.
//
// - `file`: the library's `list()`.
// - `file-headers`: the header-only baseline: read the directory, then read each file's first
//   KiB (more only if the header is longer), with the library's concurrency, no YAML.
// - `file-bodies`: what a list that reads bodies costs: `readFile` of every entry.
// - `jetstream`: the library's `list()`.
// - `jetstream-watch`: one pass of a `kv.watch()` over the bucket's last values, no parsing.
// - `jetstream-keys-get`: the naive listing: `kv.keys()`, then one `kv.get()` per key.

import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import { openFileStore, type Store } from "../mod.ts";
import type { ListCommand, ListResult } from "./_protocol.ts";
import type { JetStreamOpener } from "./_jetstream_targets.ts";

const HEADER_PROBE = 1024;
const CONCURRENCY = 16;
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
      run = () => listHeaders(dir);
    } else {
      run = () => listBodies(dir);
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

async function entryNames(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && entry.name.endsWith(".md") && !entry.name.startsWith(".")) {
      names.push(entry.name);
    }
  }
  return names;
}

async function listHeaders(dir: string): Promise<number> {
  const names = await entryNames(dir);
  let n = 0;
  await forEachLimit(names, async (name) => {
    const file = await Deno.open(`${dir}/${name}`, { read: true });
    try {
      let buf = new Uint8Array(HEADER_PROBE);
      let len = await readFull(file, buf, 0);
      while (indexOf(buf.subarray(0, len), CLOSE) < 0 && len === buf.length) {
        const bigger = new Uint8Array(buf.length * 2);
        bigger.set(buf);
        buf = bigger;
        len = await readFull(file, buf, len);
      }
      if (indexOf(buf.subarray(0, len), CLOSE) >= 0) n++;
    } finally {
      file.close();
    }
  });
  return n;
}

async function listBodies(dir: string): Promise<number> {
  const names = await entryNames(dir);
  let n = 0;
  await forEachLimit(names, async (name) => {
    const bytes = await Deno.readFile(`${dir}/${name}`);
    if (indexOf(bytes, CLOSE) >= 0) n++;
  });
  return n;
}

async function readFull(file: Deno.FsFile, buf: Uint8Array, from: number): Promise<number> {
  let n = from;
  while (n < buf.length) {
    const got = await file.read(buf.subarray(n));
    if (got === null) break;
    n += got;
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

async function forEachLimit<T>(items: readonly T[], fn: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
}
