// Listing strategies, each timed once over a location seeded with entries: the library's `list()`
// (`file`, `jetstream`), the file floor (`file-headers`, bench/_raw.ts), `readFileSync` of every
// entry (`file-bodies`), one `kv.watch()` pass (`jetstream-watch`) and the naive listing,
// `kv.keys()` then one `kv.get()` per key (`jetstream-keys-get`).

import type { KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import { validateKey } from "../mod.ts";
import { kvm, needNats, openStore } from "./_location.ts";
import type { Command, ListMethod, Location } from "./_protocol.ts";
import { rawList, rawRead } from "./_raw.ts";

type Listing = Omit<Extract<Command, { cmd: "list" }>, "cmd">;

/**
 * Runs one listing and measures its time, and the bytes the process read meanwhile
 * (`/proc/self/io` rchar; -1 when unknown).
 */
export async function listOnce(command: Listing, nc: NatsConnection | undefined) {
  const { method, location, expect } = command;
  const run = await lister(method, location, nc);
  const [before, t0] = [readChars(), performance.now()];
  const entries = await run();
  const [ms, after] = [performance.now() - t0, readChars()];
  // Socket reads do not show in rchar, so bytes are only meaningful for files.
  const bytesRead = before < 0 || after < 0 || !method.startsWith("file") ? -1 : after - before;
  if (entries === expect) return { ms, bytesRead, entries };
  throw new Error(`List method ${method} saw ${entries} entries, expected ${expect}`);
}

async function lister(method: ListMethod, location: Location, nc: NatsConnection | undefined) {
  if (method === "file" || method === "jetstream") {
    const store = await openStore(location, nc);
    return async () => (await store.list()).length;
  }
  const dir = location.dir as string;
  if (method === "file-headers") return () => Promise.resolve(rawList(dir).length);
  const whole = (e: Deno.DirEntry) =>
    e.isFile && e.name.endsWith(".md") && !e.name.startsWith(".") &&
    rawRead(`${dir}/${e.name}`) >= 0;
  if (method === "file-bodies") {
    return () => Promise.resolve([...Deno.readDirSync(dir)].filter(whole).length);
  }
  const kv = await kvm(needNats(nc)).open(location.bucket as string);
  await kv.status();
  return method === "jetstream-watch" ? () => watchPass(kv) : () => keysThenGets(kv);
}

// Whether a bucket's key is a memory's: a bucket keeps other messages beside them.
function isMemory(name: string): boolean {
  try {
    return validateKey(name) === name;
  } catch {
    return false;
  }
}

async function watchPass(kv: KV): Promise<number> {
  let n = 0;
  for await (const entry of await kv.watch()) {
    if (entry.operation === "PUT" && isMemory(entry.key)) n++;
    if (entry.delta === 0) break;
  }
  return n;
}

async function keysThenGets(kv: KV): Promise<number> {
  const keys = (await Array.fromAsync(await kv.keys())).filter((k) => isMemory(k));
  let n = 0;
  for (const key of keys) if ((await kv.get(key))?.operation === "PUT") n++;
  return n;
}

// Bytes this process has read through read(2) and friends so far; -1 off Linux.
function readChars(): number {
  try {
    return Number(/^rchar:\s*(\d+)/m.exec(Deno.readTextFileSync("/proc/self/io"))?.[1] ?? -1);
  } catch {
    return -1;
  }
}
