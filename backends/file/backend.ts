// The file backend's raw operations over one directory; `file.ts` opens it and `buildStore`
// wraps it with validation, abort checks, error normalization and spans.

import { CapacityError, CorruptError, StaleError, UnavailableError } from "../../store/errors.ts";
import { parseEntry, serializeValid } from "../../store/serialize.ts";
import type { Entry, Item } from "../../store/types.ts";
import type { ValidWrite } from "../../store/validate.ts";
import { abortCheck } from "../../store/build.ts";
import type { BackendOps, Call, KeyedEntry } from "../../store/backend.ts";
import { errorKind, quote } from "../../store/text.ts";
import { DirSync } from "./dir_sync.ts";
import {
  close,
  createWith,
  kindOf,
  kindOfQuick,
  link,
  listNames,
  remove,
  removeQuietly,
  rename,
  syncData,
} from "./fs.ts";
import { lockPath, withLock } from "./lock.ts";
import { namespaceOf, revisionOf } from "./revision.ts";
import { selfToken } from "./process.ts";
import { sweepName } from "./sweep.ts";
import { CapacityCheck, type Reservation } from "./count.ts";
import { keyOf, SUFFIX, TEMP_SUFFIX } from "./names.ts";
import { readCurrent, readDescription, readHead, splitFile } from "./read.ts";
import { entryAt, evidenceOf, logOf, versionsOf } from "./history.ts";
import { type Rule, VersionedWriter } from "./versioned.ts";
import { toVersion } from "./envelope.ts";
import type { EntryVersion, HistoryOps } from "../../store/backend.ts";
import type { HistoryRetention, Version } from "../../store/types.ts";
import { auditFileDir } from "./audit.ts";
import type { StoreAudit } from "../../store/types.ts";
import { exists, notFound, occupied, stale } from "./refusals.ts";
import { fileReview } from "./proposals.ts";
import { FileSidecar } from "./sidecar.ts";

const BACKEND = "file";
/** The mode of every entry and temp file, whatever the umask. */
export const FILE_MODE = 0o600;
const ENCODER = new TextEncoder();

/** How a file store was opened. */
export interface FileConfig {
  readonly root: string;
  readonly durable: boolean;
  readonly readBeforeUpdate: boolean;
  readonly writable: boolean;
  /** What history keeps; `undefined` with history off. */
  readonly history: HistoryRetention | undefined;
}

/** The raw operations of a file store. */
export class FileBackend implements BackendOps {
  readonly info = { backend: BACKEND, location: "" };
  readonly #c: FileConfig;
  readonly #ns: string;
  readonly #dirSync: DirSync;
  readonly #capacity: CapacityCheck;
  // The versioned writes, with history on.
  readonly #versioned: VersionedWriter | undefined;
  /** The store's history, with history on. */
  readonly history: HistoryOps | undefined;
  /** The search's vector cache and other records beside the memories (sidecar.ts). */
  readonly sidecar: FileSidecar;

  constructor(config: FileConfig) {
    this.#c = config;
    this.sidecar = new FileSidecar(config.root);
    this.#ns = namespaceOf(config.root);
    this.#dirSync = new DirSync(config.root);
    this.#capacity = new CapacityCheck(config.root);
    const retention = config.history;
    if (retention === undefined) {
      this.#versioned = undefined;
      this.history = undefined;
      return;
    }
    const versioned = new VersionedWriter({
      root: config.root,
      durable: config.durable,
      retention,
      stage: (key, bytes, meanwhile) => this.#stage(key, bytes, meanwhile),
      beginCreate: () => this.#capacity.begin(),
      endCreate: () => this.#capacity.end(),
      reserve: (started, key, path) => this.#reserve(started, key, path),
      flushRoot: () => this.#flushDir(),
      record: (call, key, bytes) => this.#record(call, key, bytes),
    });
    this.#versioned = versioned;
    const root = config.root;
    this.history = {
      retention,
      versions: (key) => Promise.resolve({ items: versionsOf(root, key), problems: [] }),
      readVersion: (key, revision) => Promise.resolve(entryAt(root, key, Number(revision))),
      log: (key) => Promise.resolve(logOf(root, key)),
      index: () => Promise.resolve(this.#index()),
      readLatest: (key, call) => Promise.resolve(this.#readLatest(key, call, true)),
      evidence: () => Promise.resolve(evidenceOf(root)),
      review: fileReview(config),
      commitIf: async (key, expected, write, call) => {
        this.#requireWritable(key);
        const { seq } = await versioned.write(key, write, { kind: "expect", expected }, call);
        if (write === null) call.scope?.forget(this.#ns, key);
        return String(seq);
      },
    };
  }

  #requireWritable(key: string): void {
    if (!this.#c.writable) {
      throw new UnavailableError(
        `[memory:file] Cannot write memory ${quote(key)}: the store was opened read-only`,
        { key },
      );
    }
  }

  // One pass over the directory: what `read` makes of each key's file, in key order (what it
  // makes nothing of is left out), sweeping what a dead writer left on the way.
  #scan<T extends { readonly key: string }>(read: (key: string) => T | undefined): T[] {
    const out: T[] = [];
    for (const { name, isFile } of listNames(this.#c.root)) {
      const key = isFile ? keyOf(name) : undefined;
      if (key === undefined) {
        if (this.#c.writable) sweepName(this.#c.root, name, isFile);
        continue;
      }
      const value = read(key);
      if (value !== undefined) out.push(value);
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  // What list() shows and, from the same header reads, the newest version of each listed key.
  #index(): { items: Item[]; heads: Version[] } {
    const heads: Version[] = [];
    const items = this.#scan((key) => {
      const { description, record } = readHead(this.#path(key), key) ?? {};
      if (description === undefined) return undefined;
      if (record !== undefined) heads.push(toVersion(key, record, description));
      return { key, description };
    });
    return { items, heads };
  }

  #path(key: string): string {
    return `${this.#c.root}/${key}${SUFFIX}`;
  }

  // deno-lint-ignore require-await
  async list(): Promise<Item[]> {
    return this.#scan((key) => {
      const description = readDescription(this.#path(key), key);
      return description === undefined ? undefined : { key, description };
    });
  }

  // deno-lint-ignore require-await
  async entries(): Promise<KeyedEntry[]> {
    return this.#scan((key) => {
      const bytes = readCurrent(this.#path(key), key, true);
      if (bytes === undefined) return undefined;
      try {
        return { key, ...parseEntry(splitFile(bytes, key).entry, key) };
      } catch (e) {
        // Damaged: list() leaves it out too (check names it).
        if (e instanceof CorruptError) return undefined;
        throw e;
      }
    });
  }

  // deno-lint-ignore require-await
  async audit(): Promise<StoreAudit> {
    return auditFileDir(this.#c.root);
  }

  // deno-lint-ignore require-await
  async read(key: string, call: Call): Promise<Entry> {
    return this.#readLatest(key, call, false).entry;
  }

  // The entry and, `withVersion`, the version its record line names, from one read of the file.
  #readLatest(key: string, call: Call, withVersion: boolean): EntryVersion {
    const bytes = readCurrent(this.#path(key), key);
    if (bytes === undefined) throw notFound(key);
    // Parsed before the revision is recorded: a run is granted only what it could read.
    const { record, entry: stored } = splitFile(bytes, key);
    const entry = parseEntry(stored, key);
    const revision = call.scope === null ? 0 : revisionOf(stored);
    abortCheck(BACKEND, "read", key, call.signal);
    if (call.scope !== null) call.scope.record(this.#ns, key, revision);
    const version = withVersion && record !== undefined
      ? toVersion(key, record, entry.description)
      : undefined;
    return { entry, version };
  }

  async create(w: ValidWrite, call: Call): Promise<void> {
    if (this.#versioned !== undefined) {
      await this.#versioned.write(w.key, w, { kind: "create" }, call);
      return;
    }
    const started = this.#capacity.begin();
    try {
      const path = this.#path(w.key);
      // A key that holds a memory costs a stat, not a durable write; link stays the arbiter.
      const kind = kindOfQuick(path);
      if (kind === "file") throw exists(w.key);
      if (kind !== null) throw occupied("create", w.key);
      const bytes = ENCODER.encode(serializeValid(w.description, w.content));
      await this.#place(w.key, path, bytes, started, call, "create");
      await this.#flushDir();
      this.#record(call, w.key, bytes);
    } finally {
      this.#capacity.end();
    }
  }

  async update(w: ValidWrite, call: Call): Promise<void> {
    if (this.#versioned !== undefined) {
      let rule: Rule = { kind: "replace" };
      if (this.#c.readBeforeUpdate || call.checked) {
        const seen = call.scope?.revision(this.#ns, w.key);
        if (seen === undefined || seen <= 0) {
          throw stale(w.key, "this run has not read it; read it first, then update");
        }
        rule = { kind: "checked", seen };
      }
      try {
        await this.#versioned.write(w.key, w, rule, call);
      } catch (e) {
        if (e instanceof StaleError) call.scope?.forget(this.#ns, w.key);
        throw e;
      }
      return;
    }
    const path = this.#path(w.key);
    const bytes = ENCODER.encode(serializeValid(w.description, w.content));
    if (this.#c.readBeforeUpdate || call.checked) {
      return this.#checkedUpdate(w.key, path, bytes, call);
    }
    const kind = kindOf(path);
    if (kind !== null && kind !== "file") throw occupied("update", w.key);
    if (kind === null) {
      // An update that creates a key is on the create path, so it counts against capacity.
      const started = this.#capacity.begin();
      try {
        await this.#place(w.key, path, bytes, started, call, "update");
      } finally {
        this.#capacity.end();
      }
    } else {
      const temp = await this.#stage(w.key, bytes);
      try {
        abortCheck(BACKEND, "update", w.key, call.signal);
        rename(temp, path);
      } catch (e) {
        removeQuietly(temp);
        throw e;
      }
    }
    await this.#flushDir();
    this.#record(call, w.key, bytes);
  }

  // Stages a new entry and puts it in place under the capacity check: `link` for a create (it
  // fails if the key exists, so one concurrent creator wins), `rename` for an update that creates.
  // The check runs while the entry is flushed when this is the handle's only create in flight;
  // with others in flight it runs after the flush, where one directory pass is likelier to be
  // shared with them (see count.ts).
  async #place(
    key: string,
    path: string,
    bytes: Uint8Array,
    started: number,
    call: Call,
    op: "create" | "update",
  ): Promise<void> {
    let slot: Reservation | undefined;
    const reserve = () => (slot = this.#reserve(started, key, path));
    let temp: string;
    try {
      temp = await this.#stage(key, bytes, this.#capacity.crowded ? undefined : reserve);
    } catch (e) {
      slot?.released();
      throw e;
    }
    try {
      slot ??= reserve();
      abortCheck(BACKEND, op, key, call.signal);
      if (op === "create") link(temp, path);
      else rename(temp, path);
      slot.linked();
    } catch (e) {
      slot?.released();
      if (errorKind(e) === "EEXIST") {
        // The name was taken when the link ran. Gone by now means a delete came in between: the
        // key held a memory at that instant, so this create lost to it, as it would have a moment
        // earlier. Only a name that is still something else is an operator's problem.
        const now = kindOf(path);
        throw now === "file" || now === null ? exists(key) : occupied("create", key);
      }
      throw e;
    } finally {
      removeQuietly(temp);
    }
  }

  async delete(key: string, call: Call): Promise<boolean> {
    const seen = call.scope?.revision(this.#ns, key);
    // Whatever happens, the run loses its authority over the key.
    call.scope?.forget(this.#ns, key);
    if (this.#versioned !== undefined) {
      if (call.checked && (seen === undefined || seen <= 0)) {
        throw stale(key, "this run has not read it; read it first, then delete", "delete");
      }
      const rule: Rule = { kind: "delete", ...(call.checked ? { seen } : {}) };
      return (await this.#versioned.write(key, null, rule, call)).seq > 0;
    }
    const path = this.#path(key);
    if (call.checked) return this.#checkedDelete(key, path, seen, call);
    const removeIt = () => {
      // Something that is not a regular file is not a memory: leave it alone.
      if (kindOf(path) !== "file") return false;
      return remove(path); // false: a concurrent deleter won
    };
    // With revision checks on, a delete takes the key's lock too, so it can never fall between
    // an update's check and its rename (which would bring the deleted key back).
    const removed = this.#c.readBeforeUpdate
      ? await withLock(lockPath(this.#c.root, key), key, call.signal, removeIt)
      : removeIt();
    if (removed) await this.#flushDir();
    return removed;
  }

  // Replaces the key only if what it holds now is what this run last read or wrote: the check
  // and the rename happen under the key's lock, synchronously, so no other writer can come in
  // between. The new entry is staged and flushed before the lock is taken.
  async #checkedUpdate(key: string, path: string, bytes: Uint8Array, call: Call): Promise<void> {
    const seen = call.scope?.revision(this.#ns, key);
    if (seen === undefined || seen <= 0) {
      throw stale(key, "this run has not read it; read it first, then update");
    }
    const temp = await this.#stage(key, bytes);
    let why: string | undefined;
    let renamed = false;
    try {
      abortCheck(BACKEND, "update", key, call.signal);
      why = await withLock(lockPath(this.#c.root, key), key, call.signal, () => {
        const current = readCurrent(this.#path(key), key);
        if (current === undefined) return "it was deleted since this run read it";
        if (revisionOf(splitFile(current, key).entry) !== seen) {
          return "it changed since this run read it";
        }
        rename(temp, path);
        renamed = true;
        return undefined;
      });
    } finally {
      if (!renamed) removeQuietly(temp);
    }
    if (why !== undefined) {
      call.scope?.forget(this.#ns, key);
      throw stale(key, `${why}; read it again, then update`);
    }
    await this.#flushDir();
    this.#record(call, key, bytes);
  }

  // Removes the key only if it holds exactly what this run last read or wrote, under the key's
  // lock like #checkedUpdate, so a checked delete and a checked update never both succeed from
  // one read.
  async #checkedDelete(
    key: string,
    path: string,
    seen: number | undefined,
    call: Call,
  ): Promise<boolean> {
    if (seen === undefined || seen <= 0) {
      throw stale(key, "this run has not read it; read it first, then delete", "delete");
    }
    const why = await withLock(lockPath(this.#c.root, key), key, call.signal, () => {
      const current = readCurrent(path, key);
      if (current === undefined) return "it was deleted since this run read it";
      if (revisionOf(splitFile(current, key).entry) !== seen) {
        return "it changed since this run read it";
      }
      return remove(path) ? undefined : "it was deleted since this run read it";
    });
    if (why !== undefined) throw stale(key, `${why}; read it again, then delete`, "delete");
    await this.#flushDir();
    return true;
  }

  #reserve(started: number, key: string, path: string): Reservation {
    try {
      return this.#capacity.reserve(started, key);
    } catch (e) {
      // A full store still says "exists" for a key it holds: that is the answer a caller can use.
      if (e instanceof CapacityError && kindOf(path) === "file") throw exists(key);
      throw e;
    }
  }

  // Writes an entry to a new temp file in the directory (mode 0600) and flushes it, durable or
  // not: a name linked or renamed to data no flush covered can survive a power cut without that
  // data (an empty entry), so the flush is what keeps every write atomic. `meanwhile` runs while
  // the flush is under way (the capacity count), so its cost hides behind the disk's.
  async #stage(key: string, bytes: Uint8Array, meanwhile?: () => void): Promise<string> {
    // At most 1 + 120 + 1 + 40 + 1 + 16 + 4 = 183 bytes, well within a name's 255.
    const temp = `${this.#c.root}/.${
      key.slice(0, 120)
    }.${selfToken()}.${randomHex()}${TEMP_SUFFIX}`;
    const fd = createWith(temp, bytes, FILE_MODE);
    try {
      const flushed = syncData(fd);
      try {
        meanwhile?.();
      } finally {
        await flushed;
      }
    } catch (e) {
      removeQuietly(temp);
      throw e;
    } finally {
      close(fd);
    }
    return temp;
  }

  #flushDir(): Promise<void> {
    return this.#c.durable ? this.#dirSync.flush() : Promise.resolve();
  }

  #record(call: Call, key: string, bytes: Uint8Array): void {
    if (call.scope !== null && !call.signal?.aborted) {
      call.scope.record(this.#ns, key, revisionOf(bytes));
    }
  }
}

function randomHex(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
