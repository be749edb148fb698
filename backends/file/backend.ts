// The file backend's raw operations over one directory; `file.ts` opens it and `buildStore`
// wraps it with validation, abort checks, error normalization and spans. Every write goes
// through the one write path (write.ts); the history reads are history.ts's.

import { CorruptError, StaleError, UnavailableError } from "../../store/errors.ts";
import { parseEntry } from "../../store/serialize.ts";
import type { Entry, HistoryRetention, Item, StoreAudit, Version } from "../../store/types.ts";
import type { ValidWrite } from "../../store/validate.ts";
import { abortCheck } from "../../store/build.ts";
import type {
  BackendOps,
  Call,
  EntryVersion,
  HistoryOps,
  KeyedEntry,
} from "../../store/backend.ts";
import { quote } from "../../store/text.ts";
import { DirSync } from "./dir_sync.ts";
import { openDir, syncOpenDir } from "./dirs.ts";
import { listNames } from "./fs.ts";
import { namespaceOf, revisionOf } from "./revision.ts";
import { sweepName } from "./sweep.ts";
import { CapacityCheck } from "./count.ts";
import { HISTORY_DIR, keyOf, SUFFIX } from "./names.ts";
import { entryPart, readCurrent, readDescription, readHead, splitFile } from "./read.ts";
import { entryAt, evidenceOf, logOf, versionsOf } from "./history.ts";
import { toVersion } from "./envelope.ts";
import { auditFileDir } from "./audit.ts";
import { notFound, stale } from "./refusals.ts";
import { type Rule, Writer, type WriteRequest } from "./write.ts";
import { ExpiredIndex } from "./cut.ts";
import { RetentionSweep } from "./retention.ts";
import { fileReview } from "./proposals.ts";
import { redactFile } from "./redact.ts";
import { FileSidecar } from "./sidecar.ts";

const BACKEND = "file";

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
  readonly #writer: Writer;
  readonly #expired = new ExpiredIndex();
  readonly #sweep: RetentionSweep | undefined;
  /** The store's history, with history on. */
  readonly history: HistoryOps | undefined;
  /** The search's vector cache and other records beside the memories (sidecar.ts). */
  readonly sidecar: FileSidecar;

  constructor(config: FileConfig) {
    this.#c = config;
    this.sidecar = new FileSidecar(config.root);
    this.#ns = namespaceOf(config.root);
    const root = config.root;
    this.#writer = new Writer({
      root,
      durable: config.durable,
      ns: this.#ns,
      readBeforeUpdate: config.readBeforeUpdate,
      history: config.history,
      capacity: new CapacityCheck(root),
      rootSync: new DirSync(root),
      historySync: new DirSync(() => {
        const hd = openDir(root, HISTORY_DIR);
        return hd === undefined ? Promise.resolve() : syncOpenDir(hd).finally(() => hd.close());
      }),
      expired: this.#expired,
    });
    const retention = config.history;
    this.#sweep = retention === undefined || !config.writable
      ? undefined
      : new RetentionSweep({ root, retention, expired: this.#expired });
    if (retention === undefined) {
      this.history = undefined;
      return;
    }
    const h = { root, expired: this.#expired };
    this.history = {
      retention,
      versions: (key) => Promise.resolve(versionsOf(h, key)),
      readVersion: (key, revision) => Promise.resolve(entryAt(h, key, revision)),
      log: (key) => Promise.resolve(logOf(h, key)),
      index: () => Promise.resolve(this.#index()),
      readLatest: (key, call) =>
        Promise.resolve(this.#readLatest(key, { call, withVersion: true })),
      evidence: () => Promise.resolve(evidenceOf(h)),
      review: fileReview(config),
      redact: (key, o, call) => {
        this.#requireWritable(key);
        return redactFile({ ...h, durable: config.durable }, key, o, call);
      },
      commitIf: async (key, expected, write, call) => {
        const { seq } = await this.#write({ key, write, rule: { kind: "expect", expected }, call });
        if (write === null) call.scope?.forget(this.#ns, key);
        return String(seq);
      },
    };
  }

  /** What a writable store does once opened: retention's first walk. */
  async opened(): Promise<void> {
    await this.#sweep?.opened();
  }

  #requireWritable(key: string): void {
    if (!this.#c.writable) {
      throw new UnavailableError(
        `[memory:file] Cannot write memory ${quote(key)}: the store was opened read-only`,
        { key },
      );
    }
  }

  async #write(req: WriteRequest) {
    this.#requireWritable(req.key);
    const written = await this.#writer.write(req);
    await this.#sweep?.wrote();
    return written;
  }

  // One pass over the directory: what `read` makes of each key's file, in key order (what it
  // makes nothing of is left out), sweeping what a dead writer left on the way.
  #scan<T extends { readonly key: string }>(read: (key: string) => T | undefined): T[] {
    const out: T[] = [];
    for (const { name, isFile } of listNames(this.#c.root)) {
      const key = isFile ? keyOf(name) : undefined;
      if (key === undefined) {
        if (this.#c.writable) sweepName(this.#c.root, { name, isFile });
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
      const { description, record } = readHead(this.#path(key), { key }) ?? {};
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
      const bytes = readCurrent(this.#path(key), { key, listed: true });
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
    return this.#readLatest(key, { call, withVersion: false }).entry;
  }

  // The entry and, `withVersion`, the version its record line names, from one read of the file.
  #readLatest(key: string, o: { call: Call; withVersion: boolean }): EntryVersion {
    const { call, withVersion } = o;
    const bytes = readCurrent(this.#path(key), { key });
    if (bytes === undefined) throw notFound(key);
    // Parsed before the revision is recorded: a run is granted only what it could read. A plain
    // read skips the version record.
    const { record, entry: stored } = withVersion
      ? splitFile(bytes, key)
      : { record: undefined, entry: entryPart(bytes, key) };
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
    await this.#write({ key: w.key, write: w, rule: { kind: "create" }, call });
  }

  async update(w: ValidWrite, call: Call): Promise<void> {
    let rule: Rule = { kind: "replace" };
    if (this.#c.readBeforeUpdate || call.checked) {
      const seen = call.scope?.revision(this.#ns, w.key);
      if (seen === undefined || seen <= 0) {
        throw stale(w.key, { why: "this run has not read it; read it first, then update" });
      }
      rule = { kind: "checked", seen };
    }
    try {
      await this.#write({ key: w.key, write: w, rule, call });
    } catch (e) {
      if (e instanceof StaleError) call.scope?.forget(this.#ns, w.key);
      throw e;
    }
  }

  async delete(key: string, call: Call): Promise<boolean> {
    const seen = call.scope?.revision(this.#ns, key);
    // Whatever happens, the run loses its authority over the key.
    call.scope?.forget(this.#ns, key);
    if (call.checked && (seen === undefined || seen <= 0)) {
      throw stale(key, {
        why: "this run has not read it; read it first, then delete",
        op: "delete",
      });
    }
    const rule: Rule = { kind: "delete", ...(call.checked ? { seen } : {}) };
    return (await this.#write({ key, write: null, rule, call })).done;
  }
}
