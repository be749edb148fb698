// The operator's view of a file store's directory: every name in it, including what the file
// backend's `list()` hides, read without writing anything. Also a read-only store over the same
// reads, for a CLI that must not create the directory or sweep temp files.
//
// The layout is the backend's published one: `<dir>/<key>.md`, temp files start with a dot.

import {
  closeSync,
  constants as FS,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  statSync,
} from "node:fs";
import { ConfigError, CorruptError, NotFoundError, UnavailableError } from "../store/errors.ts";
import { MAX_ENTRY_BYTES } from "../store/limits.ts";
import { decodeUtf8, MAX_HEADER_BYTES, parseEntry, parseHeader } from "../store/serialize.ts";
import type { Entry, Item, Store } from "../store/types.ts";
import { buildStore, readOnlyStore } from "../store/_store.ts";
import { type AuditEntry, auditValue, keyOf, sortedAudit, type StoreAudit } from "./_audit.ts";

const SUFFIX = ".md";
const READ_FLAGS = FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK | FS.O_NOCTTY;
const NO_THROW = { throwIfNoEntry: false } as const;
const CLOSE = [0x0a, 0x2d, 0x2d, 0x2d, 0x0a]; // "\n---\n"

/**
 * Audits every name in a file store's directory. Nothing is created, written or removed.
 *
 * @param dir The memory directory; it must exist.
 * @returns Every `*.md` name (healthy, corrupt, illegal, not a regular file or unreadable) and the
 * other names, sorted.
 */
export function auditFileDir(dir: string): StoreAudit {
  const entries: AuditEntry[] = [];
  const ignored: string[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(SUFFIX)) {
      ignored.push(name);
      continue;
    }
    const stem = name.slice(0, -SUFFIX.length);
    const legal = keyOf(stem);
    if ("reason" in legal) {
      entries.push({ name, problem: "illegal_name", reason: legal.reason });
      continue;
    }
    const read = readEntryFile(`${dir}/${name}`);
    if (read.bytes !== undefined) entries.push(auditValue(legal.key, read.bytes));
    else if (read.problem !== undefined) {
      entries.push({ name: legal.key, key: legal.key, ...read.problem });
    }
  }
  return sortedAudit(entries, ignored);
}

/**
 * A read-only store over a file store's directory that never writes: no directory is created and
 * no temp file is swept. `list()` and `read()` answer as the file backend does; every write is
 * refused with `ReadOnlyError`.
 *
 * @param dir The memory directory.
 * @returns The store.
 * @throws {ConfigError} when `dir` is missing or not a directory.
 */
export function openFileReader(dir: string): Store {
  const head = `[memory:file] Cannot open the memory directory given by option "dir"`;
  let st;
  try {
    st = statSync(dir, NO_THROW);
  } catch {
    throw new ConfigError(`${head}: it cannot be examined`);
  }
  if (st === undefined) throw new ConfigError(`${head}: it does not exist`);
  if (!st.isDirectory()) throw new ConfigError(`${head}: it is not a directory`);
  const refuse = () => Promise.reject(new Error("the store is read-only"));
  return readOnlyStore(buildStore({
    info: { backend: "file", location: "" },
    // deno-lint-ignore require-await
    list: async (): Promise<Item[]> => {
      const items: Item[] = [];
      for (const name of readdirSync(dir)) {
        if (!name.endsWith(SUFFIX)) continue;
        const legal = keyOf(name.slice(0, -SUFFIX.length));
        if ("reason" in legal) continue;
        const { bytes } = readEntryFile(`${dir}/${name}`);
        const description = bytes === undefined ? undefined : headerDescription(bytes, legal.key);
        if (description !== undefined) items.push({ key: legal.key, description });
      }
      return items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },
    // deno-lint-ignore require-await
    read: async (key: string): Promise<Entry> => {
      const found = readEntryFile(`${dir}/${key}${SUFFIX}`);
      if (found.bytes !== undefined) return parseEntry(found.bytes, key);
      const { problem, reason } = found.problem ?? {};
      if (problem === "corrupt") {
        throw new CorruptError(`[memory:file] Cannot parse memory "${key}": ${reason}`, { key });
      }
      if (problem === "unreadable") {
        throw new UnavailableError(`[memory:file] Cannot read memory "${key}": ${reason}`, { key });
      }
      throw new NotFoundError(`[memory:file] Cannot read memory "${key}": no memory has this key`, {
        key,
      });
    },
    create: refuse,
    update: refuse,
    delete: refuse,
  }));
}

// A key's file: its bytes, or why it is not a readable regular file; neither when it vanished.
function readEntryFile(
  path: string,
): { bytes?: Uint8Array; problem?: Pick<AuditEntry, "problem" | "reason"> } {
  const st = lstatSync(path, NO_THROW);
  if (st === undefined) return {};
  if (!st.isFile()) {
    const what = st.isDirectory()
      ? "a directory"
      : st.isSymbolicLink()
      ? "a symbolic link"
      : "not a regular file";
    return {
      problem: {
        problem: "not_a_file",
        reason: `it is ${what}, not a memory file; the backend never follows or lists it`,
      },
    };
  }
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === "ENOENT") return {};
    if (code === "EACCES" || code === "EPERM") {
      return { problem: { problem: "unreadable", reason: "permission denied" } };
    }
    return { problem: { problem: "unreadable", reason: `it cannot be opened (${String(code)})` } };
  }
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile()) {
      return { problem: { problem: "not_a_file", reason: "it is not a regular file" } };
    }
    if (opened.size > MAX_ENTRY_BYTES) {
      return {
        problem: {
          problem: "corrupt",
          reason:
            `the file has ${opened.size} bytes, over the ${MAX_ENTRY_BYTES}-byte limit of an entry`,
        },
      };
    }
    const buf = new Uint8Array(opened.size);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, n);
      if (got === 0) break;
      n += got;
    }
    return { bytes: buf.subarray(0, n) };
  } finally {
    closeSync(fd);
  }
}

// The description in an entry's header, as the backend's listing reads it: a valid header over
// a damaged body is still listed (reading it reports the damage); a damaged header is not.
function headerDescription(bytes: Uint8Array, key: string): string | undefined {
  const limit = Math.min(bytes.length, MAX_HEADER_BYTES + CLOSE.length);
  let end = limit;
  for (let i = 3; i + CLOSE.length <= limit; i++) {
    if (CLOSE.every((b, j) => bytes[i + j] === b)) {
      end = i + CLOSE.length;
      break;
    }
  }
  try {
    return parseHeader(decodeUtf8(bytes.subarray(0, end), key), key).description;
  } catch (e) {
    if (e instanceof CorruptError) return undefined;
    throw e;
  }
}
