// The file floors: the fastest way to do each job on Deno without the library, so a target says
// how far the library is from what the runtime allows (not from a copy of the library's code).
//
// - read: `Deno.readFileSync`, decode, split the header from the body.
// - list: one `readDirSync` pass, then one small read (the first KiB) per entry, decode, find the
//   description line. No bodies.
// - durable create: `lstat` (an existing key costs no write), temp file, write, fsync, `link`
//   (exclusive), unlink the temp, directory fsync: two fsyncs per create.
// - durable update: the same with `rename` in place of `link`; delete: `remove`, directory fsync.
// - 16 in flight: the same writes, their directory fsyncs shared by group commit (`groupCommit`).
// No validation, symlink checks, capacity or telemetry.

import type { Entries, Target } from "./_target.ts";

const DECODER = new TextDecoder();
const HEAD_BYTES = 1024;
// A deliberate bug for the benchmark's own test: the raw create claims every key it tries, so
// the "one create winner per key" invariant must break and the run must fail.
const FAULT_CREATE_ALWAYS_WINS = Deno.env.get("AGENTMEM_BENCH_FAULT") === "create-always-wins";

/** Reads one entry file whole and splits header from body; returns the body's length. */
export function rawRead(path: string): number {
  const text = DECODER.decode(Deno.readFileSync(path));
  const end = text.indexOf("\n---\n", 4);
  if (end < 0) throw new Error("No header");
  return text.length - end - 5;
}

/** One directory pass plus the first KiB of each `.md` entry: every key and description. */
export function rawList(dir: string): { key: string; description: string }[] {
  const out: { key: string; description: string }[] = [];
  const buf = new Uint8Array(HEAD_BYTES);
  for (const e of Deno.readDirSync(dir)) {
    if (!e.isFile || !e.name.endsWith(".md") || e.name.startsWith(".")) continue;
    using file = Deno.openSync(`${dir}/${e.name}`);
    const head = DECODER.decode(buf.subarray(0, file.readSync(buf) ?? 0));
    const at = head.indexOf("description: ");
    out.push({
      key: e.name.slice(0, -3),
      description: head.slice(at + 13, head.indexOf("\n", at)),
    });
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Flushes a directory (its entries) to disk. */
export async function syncDir(dir: string): Promise<void> {
  using handle = Deno.openSync(dir, { read: true });
  await handle.sync();
}

/**
 * Group commit, the obvious way: a caller waits for a directory fsync that starts after its
 * call. One runs at a time; everyone who asks while it runs shares the next one.
 */
export function groupCommit(dir: string): () => Promise<void> {
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const start = () => {
    next = undefined;
    running = syncDir(dir).finally(() => (running = undefined));
    return running;
  };
  return () => running === undefined ? start() : (next ??= running.then(start));
}

async function stage(dir: string, key: string, bytes: Uint8Array): Promise<string> {
  const temp = `${dir}/.${key}.${crypto.randomUUID()}.tmp`;
  using file = Deno.openSync(temp, { write: true, createNew: true, mode: 0o600 });
  for (let off = 0; off < bytes.length;) off += file.writeSync(bytes.subarray(off));
  await file.syncData();
  return temp;
}

/** Durable exclusive create; `false` when the key exists. `sync` flushes the directory. */
export async function rawCreate(
  dir: string,
  key: string,
  bytes: Uint8Array,
  sync = () => syncDir(dir),
): Promise<boolean> {
  const path = `${dir}/${key}.md`;
  // Look before staging: a key that exists costs one lstat, not a durable write. `link` stays
  // the arbiter when two creates race past the look.
  try {
    Deno.lstatSync(path);
    return false;
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const temp = await stage(dir, key, bytes);
  try {
    Deno.linkSync(temp, path);
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) return false;
    throw e;
  } finally {
    Deno.removeSync(temp);
  }
  await sync();
  return true;
}

/** Durable replace. `sync` flushes the directory. */
export async function rawUpdate(
  dir: string,
  key: string,
  bytes: Uint8Array,
  sync = () => syncDir(dir),
): Promise<void> {
  Deno.renameSync(await stage(dir, key, bytes), `${dir}/${key}.md`);
  await sync();
}

/**
 * The file floors over `dir` as a target. `sync` flushes the directory: by default one fsync per
 * write; `groupCommit(dir)` for many writes in flight.
 */
export function fileRawTarget(dir: string, entries: Entries, sync = () => syncDir(dir)): Target {
  const path = (key: string) => `${dir}/${key}.md`;
  return {
    create: async (key) =>
      (await rawCreate(dir, key, entries.createBytes, sync)) || FAULT_CREATE_ALWAYS_WINS,
    update: (key) => rawUpdate(dir, key, entries.updateBytes, sync),
    read: (key) => Promise.resolve(rawRead(path(key)) === entries.valueSize),
    async delete(key) {
      try {
        Deno.removeSync(path(key));
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return false;
        throw e;
      }
      await sync();
      return true;
    },
    increment: () => Promise.reject(new Error("file-raw does not run the counter")),
  };
}

/** Runs `fn` over `items` with at most `width` calls in flight; resolves to the elapsed ms. */
export async function inFlight<T>(
  items: readonly T[],
  width: number,
  fn: (item: T) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return performance.now() - t0;
}
