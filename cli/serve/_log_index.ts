// The console's copy of the store's history, newest first, so the audit log and the run pages are
// served from memory instead of reading every version file (65,536 of them in a full store) at
// each request. Built once from `auditLog`; before each use it is brought up to date from one
// listing with each key's newest version (`listWithHeads`): a key whose newest version differs,
// or that disappeared from the listing, has its history read again. A key the listing never showed
// (created and deleted between two uses) is caught by the next full read, done at the first use
// after `REBUILD_MS`, in line (the file backend's reads are synchronous: done in the background
// they would hold up whatever page came next), or when the operator asks (`reread`).

import {
  auditLog,
  history,
  type HistoryProblem,
  listWithHeads,
  MemoryError,
  type Store,
  type Version,
  type VersionList,
} from "../../mod.ts";

/** How old the last full read may be before a use reads the whole history again. */
export const REBUILD_MS = 5 * 60_000;

/** A version and the instant it sorts by (never earlier than the key's version before it). */
interface Placed {
  readonly v: Version;
  readonly at: number;
}

function newerFirst(a: Placed, b: Placed): number {
  return b.at - a.at || (a.v.key < b.v.key ? -1 : a.v.key > b.v.key ? 1 : 0) ||
    Number(b.v.revision) - Number(a.v.revision);
}

// A key's versions (oldest first) placed so that a clock that went back never reorders them.
function place(oldestFirst: readonly Version[]): Placed[] {
  let floor = -Infinity;
  return oldestFirst.map((v) => {
    const t = Date.parse(v.at);
    floor = Math.max(floor, Number.isNaN(t) ? floor : t);
    return { v, at: floor };
  });
}

function merge(a: readonly Placed[], b: readonly Placed[]): Placed[] {
  const out: Placed[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(newerFirst(a[i]!, b[j]!) <= 0 ? a[i++]! : b[j++]!);
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}

/** The store's history, kept in step with it. */
export class LogIndex {
  readonly #store: Store;
  #byKey = new Map<string, Version[]>(); // oldest first
  #all: Placed[] = []; // newest first
  #builtAt = 0;
  #generation = 0;
  #lock: Promise<unknown> = Promise.resolve();
  #dirty = new Set<string>();
  #problems = new Map<string, readonly HistoryProblem[]>(); // by key, what the reads skipped

  constructor(store: Store) {
    this.#store = store;
  }

  /** A number that changes whenever what the index holds changes. */
  get generation(): number {
    return this.#generation;
  }

  /** Every kept version, newest first, up to date as of this call. */
  async versions(): Promise<readonly Version[]> {
    await this.#exclusive(() => this.#sync());
    return this.#all.map((p) => p.v);
  }

  /** Versions, newest first, that `keep` accepts: the `skip` first dropped, then `take`. */
  async select(
    keep: (v: Version) => boolean,
    page: { skip: number; take: number },
  ): Promise<{ versions: Version[]; more: boolean }> {
    await this.#exclusive(() => this.#sync());
    const out: Version[] = [];
    let seen = 0;
    for (const { v } of this.#all) {
      if (!keep(v)) continue;
      if (seen++ < page.skip) continue;
      if (out.length === page.take) return { versions: out, more: true };
      out.push(v);
    }
    return { versions: out, more: false };
  }

  /** What the reads behind the index skipped (damaged records, stray files), as of the last use. */
  get problems(): HistoryProblem[] {
    return [...this.#problems.values()].flat();
  }

  /** Marks keys the console itself just wrote, so the next use reads them again. */
  wrote(keys: Iterable<string>): void {
    for (const k of keys) this.#dirty.add(k);
  }

  /** When the whole history was last read (ISO 8601), `undefined` before the first read. */
  get readAt(): string | undefined {
    return this.#builtAt === 0 ? undefined : new Date(this.#builtAt).toISOString();
  }

  /** Reads the whole history again, now. */
  async reread(): Promise<void> {
    await this.#exclusive(() => this.#rebuild());
  }

  /** Waits for the use in flight, if any (on shutdown). */
  async settle(): Promise<void> {
    await this.#lock;
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#lock.then(fn, fn);
    this.#lock = run.catch(() => {});
    return run;
  }

  async #sync(): Promise<void> {
    if (this.#builtAt === 0 || Date.now() - this.#builtAt > REBUILD_MS) {
      await this.#rebuild();
      return;
    }
    const listed = await listWithHeads(this.#store);
    if (listed === undefined) return;
    const heads = new Map(listed.heads.map((v) => [v.key, v.revision]));
    const stale = new Set(this.#dirty);
    this.#dirty.clear();
    const present = new Set<string>();
    for (const { key } of listed.items) {
      present.add(key);
      const mine = this.#byKey.get(key)?.at(-1);
      if (mine === undefined || mine.revision !== heads.get(key)) stale.add(key);
    }
    for (const [key, vs] of this.#byKey) {
      if (!present.has(key) && vs.at(-1)?.op !== "delete") stale.add(key);
    }
    if (stale.size === 0) return;
    const fresh: Version[][] = [];
    for (const key of stale) {
      let read: readonly Version[];
      try {
        read = await history(this.#store, key);
        this.#problems.set(key, (read as VersionList).problems);
      } catch (e) {
        // A key whose history cannot be read is said, and left out; the others go on.
        if (!(e instanceof MemoryError) || e.code !== "corrupt") throw e;
        read = [];
        this.#problems.set(key, [{ key, problem: "damaged", reason: e.message }]);
      }
      const vs = [...read].reverse();
      if (vs.length === 0) this.#byKey.delete(key);
      else this.#byKey.set(key, vs);
      fresh.push(vs);
    }
    const added = fresh.flatMap(place).sort(newerFirst);
    this.#all = merge(this.#all.filter((p) => !stale.has(p.v.key)), added);
    this.#generation++;
  }

  async #rebuild(): Promise<void> {
    const started = Date.now();
    const byKey = new Map<string, Version[]>();
    const log = await auditLog(this.#store);
    this.#problems = Map.groupBy(log.problems, (p) => p.key);
    for (const v of log) {
      let list = byKey.get(v.key);
      if (list === undefined) byKey.set(v.key, list = []);
      list.push(v);
    }
    for (const vs of byKey.values()) vs.sort((a, b) => Number(a.revision) - Number(b.revision));
    this.#byKey = byKey;
    this.#all = [...byKey.values()].flatMap(place).sort(newerFirst);
    this.#builtAt = started;
    this.#generation++;
  }
}
