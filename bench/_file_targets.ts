// The file backend and its two baselines.
//
// - `file`: the library (`openFileStore`), durable by default.
// - `file-raw`: the same system calls the backend makes, on the same serialized bytes, without
//   validation, YAML, spans, symlink checks beyond the open flags, or the capacity count. A write
//   is a temp file, write, fsync, `link` for a create or `rename` for an update, unlink of the
//   temp, fsync of the directory. A read is `open` with O_NOFOLLOW|O_NONBLOCK (through
//   node:fs, as the backend does: Deno.open has no such flags), fstat, read to EOF, close.
// - `file-wfa`: `npm:write-file-atomic` with fsync on (temp, write, fsync, rename; it never
//   fsyncs the directory and cannot create exclusively). An ecosystem reference for writes.

import { constants as FS } from "node:fs";
import { open } from "node:fs/promises";
import writeFileAtomic from "write-file-atomic";
import { openFileStore, serializeEntry, type Store } from "../mod.ts";
import type { SnapshotResult } from "./_protocol.ts";
import { DESCRIPTION, type Entries, type Target } from "./_target.ts";

const DECODER = new TextDecoder();
const READ_FLAGS = FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK;
// A deliberate bug for the benchmark's own test: the raw create claims every key it tries, so
// the "one create winner per key" invariant must break and the run must fail.
const FAULT_CREATE_ALWAYS_WINS = Deno.env.get("AGENTMEM_BENCH_FAULT") === "create-always-wins";

/** Opens the library's file store over `dir`. */
export async function openFileLibrary(dir: string, entries: Entries): Promise<Target> {
  const store: Store = await openFileStore({ dir });
  return {
    name: "file",
    async create(key) {
      try {
        await store.create(key, DESCRIPTION, entries.createContent);
        return true;
      } catch (e) {
        if ((e as { code?: unknown }).code === "exists") return false;
        throw e;
      }
    },
    async update(key) {
      await store.update(key, DESCRIPTION, entries.updateContent);
    },
    async read(key) {
      return entries.isWrittenContent((await store.read(key)).content);
    },
    delete: (key) => store.delete(key),
    increment: unsupported,
    seed: (keys, content, valueSize) => seedFiles(dir, keys, content, valueSize),
    async snapshot(bodiesOf) {
      const keys = (await store.list()).map((item) => item.key);
      const values: Record<string, string> = {};
      for (const key of bodiesOf) values[key] = (await store.read(key)).content;
      return { keys, values };
    },
    close: () => Promise.resolve(),
  };
}

/** The raw atomic-write baseline over `dir`. */
export function openFileRaw(dir: string, entries: Entries): Target {
  const path = (key: string) => `${dir}/${key}.md`;
  return {
    name: "file-raw",
    async create(key) {
      const temp = await stage(dir, key, entries.createBytes);
      let created = true;
      try {
        await Deno.link(temp, path(key));
      } catch (e) {
        if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
        created = FAULT_CREATE_ALWAYS_WINS;
      } finally {
        await Deno.remove(temp);
      }
      if (created) await syncDir(dir);
      return created;
    },
    async update(key) {
      const temp = await stage(dir, key, entries.updateBytes);
      await Deno.rename(temp, path(key));
      await syncDir(dir);
    },
    async read(key) {
      return entries.isWrittenBytes(await readNoFollow(path(key)));
    },
    async delete(key) {
      try {
        await Deno.remove(path(key));
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return false;
        throw e;
      }
      await syncDir(dir);
      return true;
    },
    increment: unsupported,
    seed: (keys, content, valueSize) => seedFiles(dir, keys, content, valueSize),
    snapshot: (bodiesOf) => snapshotFiles(dir, bodiesOf, entries),
    close: () => Promise.resolve(),
  };
}

/** The write-file-atomic baseline over `dir`: writes only. */
export function openFileWfa(dir: string, entries: Entries): Target {
  const path = (key: string) => `${dir}/${key}.md`;
  return {
    name: "file-wfa",
    async create(key) {
      await writeFileAtomic(path(key), entries.createBytes, { fsync: true });
      return true;
    },
    async update(key) {
      await writeFileAtomic(path(key), entries.updateBytes, { fsync: true });
    },
    read: unsupported,
    delete: unsupported,
    increment: unsupported,
    seed: (keys, content, valueSize) => seedFiles(dir, keys, content, valueSize),
    snapshot: (bodiesOf) => snapshotFiles(dir, bodiesOf, entries),
    close: () => Promise.resolve(),
  };
}

// Reads a regular file whole without following a symlink or blocking on a FIFO.
async function readNoFollow(path: string): Promise<Uint8Array> {
  const fh = await open(path, READ_FLAGS);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new Error("Not a regular file");
    const buf = new Uint8Array(st.size + 1);
    let n = 0;
    while (n < buf.length) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    return buf.subarray(0, n);
  } finally {
    await fh.close();
  }
}

function unsupported(): Promise<never> {
  return Promise.reject(new Error("This target does not run this operation"));
}

// The backend's staging step: a dot-named temp file, written whole and fsynced.
async function stage(dir: string, key: string, bytes: Uint8Array): Promise<string> {
  const temp = `${dir}/.${key}.${randomHex()}.tmp`;
  const file = await Deno.open(temp, { write: true, createNew: true });
  try {
    for (let off = 0; off < bytes.length;) off += await file.write(bytes.subarray(off));
    await file.sync();
  } finally {
    file.close();
  }
  return temp;
}

async function syncDir(dir: string): Promise<void> {
  const handle = await Deno.open(dir, { read: true });
  try {
    await handle.sync();
  } finally {
    handle.close();
  }
}

function randomHex(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Writes fixture entries without fsync (set-up, not measured). */
export async function seedFiles(
  dir: string,
  keys: readonly string[],
  content: string | undefined,
  valueSize: number,
): Promise<void> {
  const bytes = new TextEncoder().encode(
    serializeEntry(DESCRIPTION, content ?? "s".repeat(valueSize)),
  );
  for (const key of keys) await Deno.writeFile(`${dir}/${key}.md`, bytes);
}

async function snapshotFiles(
  dir: string,
  bodiesOf: readonly string[],
  entries: Entries,
): Promise<SnapshotResult> {
  const keys: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && entry.name.endsWith(".md") && !entry.name.startsWith(".")) {
      keys.push(entry.name.slice(0, -3));
    }
  }
  keys.sort();
  const values: Record<string, string> = {};
  for (const key of bodiesOf) {
    const bytes = await Deno.readFile(`${dir}/${key}.md`);
    values[key] = DECODER.decode(bytes.subarray(entries.headerBytes));
  }
  return { keys, values };
}
