// The three workloads a client process runs through the library's public API, recording every
// call: read-modify-write counters with scopes, create-unique races, and a set of creates and
// deletes. Every write carries a unique id so the checker can tell which writes were applied, and
// passes it as its tool call id, so the checker finds each write's version in the history.

import { MemoryError, NotFoundError, Scope, type Store } from "../../mod.ts";
import type { HistoryWriter, OpRecord, Outcome } from "./history.ts";
import type { Rng } from "../_lib/rng.ts";

/** Counter keys shared by every client (`c<k>g<generation>`). */
export const COUNTER_KEYS = 4;
/** Ids a counter holds before clients move on to its next generation (keeps entries small). */
export const GENERATION_CAP = 2_000;
/** Every client races to create the key of the current slot of this many milliseconds. */
export const UNIQUE_SLOT_MS = 300;
/** Keyspaces rotate this often, so that no prefix comes near the 1,024-entry capacity. */
export const EPOCH_MS = 20_000;

/** Parses a counter's content: the ids of the increments it holds. */
export function counterIds(content: string): string[] {
  return content.split(" ").filter((s) => s !== "");
}

type Result<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** One client's state: its stores, its history and how it makes and records calls. */
export class Client {
  readonly #p: number;
  readonly #node: number;
  readonly #rng: Rng;
  readonly #history: HistoryWriter;
  readonly #open: (prefix: string) => Promise<Store>;
  readonly #hangMs: number;
  readonly #stores = new Map<string, Store>();
  readonly #generations = Array.from({ length: COUNTER_KEYS }, () => 0);
  readonly #mine: Array<{ ns: string; key: string }> = [];
  #ops = 0;
  #setKeys = 0;

  /**
   * @param p This client's number. @param opts Its node, random source, history, how to open a
   * store for a prefix, and after how many milliseconds an unanswered call counts as hung.
   */
  constructor(p: number, opts: {
    node: number;
    rng: Rng;
    history: HistoryWriter;
    open: (prefix: string) => Promise<Store>;
    hangMs: number;
  }) {
    this.#p = p;
    this.#node = opts.node;
    this.#rng = opts.rng;
    this.#history = opts.history;
    this.#open = opts.open;
    this.#hangMs = opts.hangMs;
  }

  /** Runs one randomly chosen operation of one workload. Resolves false when it failed. */
  async step(): Promise<boolean> {
    const x = this.#rng.next();
    if (x < 0.4) return await this.#counter();
    if (x < 0.65) return await this.#unique();
    return await this.#set();
  }

  #id(): string {
    return `${this.#p}-${this.#ops++}`;
  }

  async #store(prefix: string): Promise<Store | undefined> {
    const known = this.#stores.get(prefix);
    if (known) return known;
    try {
      const store = await this.#open(prefix);
      this.#stores.set(prefix, store);
      return store;
    } catch {
      return undefined; // the cluster did not answer; a later step tries again
    }
  }

  // Makes one call and records it. A call that has not ended `hangMs` after it began is
  // recorded as hung and left behind.
  async #call<T>(
    op: Omit<OpRecord, "t" | "p" | "node" | "invoke" | "complete" | "outcome" | "code" | "r">,
    fn: () => Promise<T>,
    result?: (value: T) => OpRecord["r"],
  ): Promise<Result<T>> {
    const invoke = Date.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const hang = new Promise<"hung">((r) => timer = setTimeout(() => r("hung"), this.#hangMs));
    const settled = fn().then(
      (value): Result<T> => ({ ok: true, value }),
      (error): Result<T> => ({ ok: false, error }),
    );
    const res = await Promise.race([settled, hang]);
    clearTimeout(timer);
    const base = { t: "op" as const, p: this.#p, node: this.#node, ...op, invoke };
    if (res === "hung") {
      this.#history.add({ ...base, outcome: "hung" });
      return { ok: false, error: new Error("hung") };
    }
    const complete = Date.now();
    if (res.ok) {
      const r = result?.(res.value);
      this.#history.add({ ...base, complete, outcome: "ok", ...(r === undefined ? {} : { r }) });
    } else {
      const e = res.error;
      const outcome: Outcome = !(e instanceof MemoryError)
        ? "untyped"
        : e.code === "unavailable"
        ? "unavailable"
        : "refused";
      const code = e instanceof MemoryError ? e.code : e instanceof Error ? e.name : typeof e;
      this.#history.add({ ...base, complete, outcome, code });
    }
    return res;
  }

  // Read a counter with a scope, then update it with one more id; create it when missing. A
  // full generation sends the client to the next one.
  async #counter(): Promise<boolean> {
    const store = await this.#store("ctr");
    if (!store) return false;
    const k = this.#rng.int(0, COUNTER_KEYS - 1);
    for (let hop = 0; hop < 4; hop++) {
      const key = `c${k}g${this.#generations[k]}`;
      const scope = new Scope();
      const read = await this.#call(
        { wl: "ctr", f: "read", ns: "ctr", key },
        () => store.read(key, { scope }),
        // How many ids the read saw (the list only grows): enough to find a stale read.
        (e) => counterIds(e.content).length,
      );
      const id = this.#id();
      if (!read.ok) {
        if (!(read.error instanceof NotFoundError)) return false;
        const made = await this.#call(
          { wl: "ctr", f: "create", ns: "ctr", key, v: id },
          () => store.create(key, "a counter", id, { scope, callId: id }),
        );
        return made.ok;
      }
      const ids = counterIds(read.value.content);
      if (ids.length >= GENERATION_CAP) {
        this.#generations[k] = (this.#generations[k] ?? 0) + 1;
        continue;
      }
      const content = [...ids, id].join(" ");
      const updated = await this.#call(
        { wl: "ctr", f: "update", ns: "ctr", key, v: id },
        () => store.update(key, "a counter", content, { scope, callId: id }),
      );
      return updated.ok;
    }
    return false;
  }

  // Every client creates the key of the current time slot: at most one may win.
  async #unique(): Promise<boolean> {
    const now = Date.now();
    const ns = `u${Math.floor(now / EPOCH_MS)}`;
    const store = await this.#store(ns);
    if (!store) return false;
    const key = `k${Math.floor(now / UNIQUE_SLOT_MS)}`;
    const id = this.#id();
    const res = await this.#call(
      { wl: "uniq", f: "create", ns, key, v: id },
      () => store.create(key, "a race", id, { callId: id }),
    );
    return res.ok || (!res.ok && res.error instanceof MemoryError && res.error.code === "exists");
  }

  // Creates keys of this client's own, and deletes some of those it created.
  async #set(): Promise<boolean> {
    if (this.#mine.length > 0 && this.#rng.next() < 0.3) {
      const i = this.#rng.int(0, this.#mine.length - 1);
      const { ns, key } = this.#mine[i] as { ns: string; key: string };
      const store = await this.#store(ns);
      if (!store) return false;
      this.#mine.splice(i, 1);
      const id = this.#id();
      const res = await this.#call(
        { wl: "set", f: "delete", ns, key, v: id },
        () => store.delete(key, { callId: id }),
        (existed) => existed,
      );
      return res.ok;
    }
    const ns = `s${this.#p}e${Math.floor(Date.now() / EPOCH_MS)}`;
    const store = await this.#store(ns);
    if (!store) return false;
    const key = `k${this.#setKeys++}`;
    const id = this.#id();
    const res = await this.#call(
      { wl: "set", f: "create", ns, key, v: id },
      () => store.create(key, "a set member", id, { callId: id }),
    );
    const unknown = !res.ok && res.error instanceof MemoryError && res.error.code === "unavailable";
    if (res.ok || unknown) this.#mine.push({ ns, key });
    return res.ok;
  }
}
