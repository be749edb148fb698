// The file backend and its two baselines.
//
// - `file`: the library (`openFileStore`), durable by default.
// - `file-raw`: the same system calls the backend makes, through the same Deno APIs (synchronous
//   for metadata and small reads, asynchronous for fsync), on the same serialized bytes, without
//   validation, YAML, spans or the capacity count. A create is a temp file, write, fsync, `link`,
//   unlink of the temp, fsync of the directory; an update is an lstat of the name (the backend's
//   check that it is no symlink or directory), then the temp file, `rename`, directory fsync. A
//   read is an lstat (only regular files are opened), `open` with O_NOFOLLOW|O_NONBLOCK|O_NOCTTY
//   (through node:fs, as the backend does: Deno.open has no such flags), fstat, read, close.
// - `file-wfa`: `npm:write-file-atomic` with fsync on (temp, write, fsync, rename; it never
//   fsyncs the directory and cannot create exclusively). An ecosystem reference for writes.

import { closeSync, constants as FS, fstatSync, openSync, readSync } from "node:fs";
import writeFileAtomic from "write-file-atomic";
import { openFileStore, serializeEntry, type Store } from "../mod.ts";
import type { SnapshotResult } from "./_protocol.ts";
import { DESCRIPTION, type Entries, type Target } from "./_target.ts";

const DECODER = new TextDecoder();
const READ_FLAGS = FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK | FS.O_NOCTTY;
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
        Deno.linkSync(temp, path(key));
      } catch (e) {
        if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
        created = FAULT_CREATE_ALWAYS_WINS;
      } finally {
        Deno.removeSync(temp);
      }
      if (created) await syncDir(dir);
      return created;
    },
    async update(key) {
      lstatOrNull(path(key));
      const temp = await stage(dir, key, entries.updateBytes);
      Deno.renameSync(temp, path(key));
      await syncDir(dir);
    },
    // deno-lint-ignore require-await
    async read(key) {
      return entries.isWrittenBytes(readNoFollow(path(key)));
    },
    async delete(key) {
      if (!lstatOrNull(path(key))?.isFile) return false;
      try {
        Deno.removeSync(path(key));
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
function readNoFollow(path: string): Uint8Array {
  if (!lstatOrNull(path)?.isFile) throw new Error("Not a regular file");
  const fd = openSync(path, READ_FLAGS);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error("Not a regular file");
    const buf = new Uint8Array(st.size);
    let n = 0;
    while (n < buf.length) {
      const bytesRead = readSync(fd, buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

function lstatOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

function unsupported(): Promise<never> {
  return Promise.reject(new Error("This target does not run this operation"));
}

// The backend's staging step: a dot-named temp file, written whole and fsynced.
async function stage(dir: string, key: string, bytes: Uint8Array): Promise<string> {
  const temp = `${dir}/.${key}.${randomHex()}.tmp`;
  const file = Deno.openSync(temp, { write: true, createNew: true });
  try {
    for (let off = 0; off < bytes.length;) off += file.writeSync(bytes.subarray(off));
    await file.sync();
  } finally {
    file.close();
  }
  return temp;
}

async function syncDir(dir: string): Promise<void> {
  const handle = Deno.openSync(dir, { read: true });
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
