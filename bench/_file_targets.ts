// The file backend and its floors.
//
// - `file`: the library (`openFileStore`), durable by default.
// - `file-raw`: the fastest way to do each job on Deno (bench/_raw.ts), on the same serialized
//   bytes: a read is `readFileSync` + decode + split; a create is a temp file, write, fsync,
//   `link`, unlink of the temp, directory fsync (an update: `rename` in place of `link`); a
//   delete is `remove` + directory fsync. No validation, symlink checks, capacity or telemetry.

import { openFileStore, serializeEntry, type Store } from "../mod.ts";
import type { SnapshotResult } from "./_protocol.ts";
import { DESCRIPTION, type Entries, type Target } from "./_target.ts";
import { DirSync, rawCreate, rawRead, rawUpdate } from "./_raw.ts";

const DECODER = new TextDecoder();
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

/** The floors over `dir` (bench/_raw.ts). */
export function openFileRaw(dir: string, entries: Entries): Target {
  const path = (key: string) => `${dir}/${key}.md`;
  const sync = new DirSync(dir);
  return {
    name: "file-raw",
    async create(key) {
      return (await rawCreate(dir, sync, key, entries.createBytes)) || FAULT_CREATE_ALWAYS_WINS;
    },
    update: (key) => rawUpdate(dir, sync, key, entries.updateBytes),
    // deno-lint-ignore require-await
    async read(key) {
      return rawRead(path(key)) === entries.valueSize;
    },
    async delete(key) {
      try {
        Deno.removeSync(path(key));
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return false;
        throw e;
      }
      await sync.sync();
      return true;
    },
    increment: unsupported,
    seed: (keys, content, valueSize) => seedFiles(dir, keys, content, valueSize),
    snapshot: (bodiesOf) => snapshotFiles(dir, bodiesOf, entries),
    close: () => Promise.resolve(),
  };
}

function unsupported(): Promise<never> {
  return Promise.reject(new Error("This target does not run this operation"));
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
