// The in-memory Store double shared by the store tests (registry, telemetry) and the tools tests.

import {
  type CallOptions,
  CapacityError,
  type Entry,
  ExistsError,
  type Info,
  type Item,
  NotFoundError,
  StaleError,
  type Store,
  UnavailableError,
} from "../../mod.ts";

/** One call a `FakeStore` saw. */
export interface Call {
  readonly op: "list" | "read" | "create" | "update" | "delete";
  readonly key?: string;
  readonly opts: CallOptions | undefined;
}

/**
 * An in-memory `Store` that is not built by the library (so it exercises "any Store"), enforces
 * read-before-update through the scope like the jetstream backend, records every call, and can be
 * made to fail. It does not validate: it returns whatever it was seeded with, hostile or not.
 */
export class FakeStore implements Store {
  static readonly NAMESPACE = "fake:test";
  readonly entries = new Map<string, { description: string; content: string; rev: number }>();
  readonly calls: Call[] = [];
  /** When set, every call rejects with it. */
  failWith: unknown = undefined;
  /** Create refuses beyond this many entries. */
  capacity = Infinity;
  #rev = 0;

  constructor(readonly enforce = true, readonly backend = "fake") {}

  info(): Info {
    return { backend: this.backend, location: "" };
  }

  /** Puts an entry without validation, as a hand-edited or foreign store could hold it. */
  seed(key: string, description: string, content: string): void {
    this.entries.set(key, { description, content, rev: ++this.#rev });
  }

  #enter(op: Call["op"], key: string | undefined, opts: CallOptions | undefined): void {
    this.calls.push(key === undefined ? { op, opts } : { op, key, opts });
    if (this.failWith !== undefined) throw this.failWith;
  }

  list(opts?: CallOptions): Promise<Item[]> {
    return attempt(() => {
      this.#enter("list", undefined, opts);
      return [...this.entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, e]) => ({ key, description: e.description }));
    });
  }

  read(key: string, opts?: CallOptions): Promise<Entry> {
    return attempt(() => {
      this.#enter("read", key, opts);
      const e = this.entries.get(key);
      if (e === undefined) throw new NotFoundError(`[memory:fake] no ${key}`, { key });
      opts?.scope?.record(FakeStore.NAMESPACE, key, e.rev);
      return { description: e.description, content: e.content };
    });
  }

  create(key: string, description: string, content: string, opts?: CallOptions): Promise<void> {
    return attempt(() => {
      this.#enter("create", key, opts);
      if (this.entries.has(key)) throw new ExistsError(`[memory:fake] ${key} exists`, { key });
      if (this.entries.size >= this.capacity) {
        throw new CapacityError("[memory:fake] full", { key });
      }
      this.seed(key, description, content);
      opts?.scope?.record(FakeStore.NAMESPACE, key, this.#rev);
    });
  }

  update(key: string, description: string, content: string, opts?: CallOptions): Promise<void> {
    return attempt(() => {
      this.#enter("update", key, opts);
      const held = opts?.scope?.revision(FakeStore.NAMESPACE, key);
      const e = this.entries.get(key);
      if (this.enforce && (held === undefined || e === undefined || e.rev !== held)) {
        throw new StaleError(`[memory:fake] ${key} is stale`, { key });
      }
      this.seed(key, description, content);
      opts?.scope?.record(FakeStore.NAMESPACE, key, this.#rev);
    });
  }

  delete(key: string, opts?: CallOptions): Promise<boolean> {
    return attempt(() => {
      this.#enter("delete", key, opts);
      opts?.scope?.forget(FakeStore.NAMESPACE, key);
      return this.entries.delete(key);
    });
  }

  /** The store's contents, for "nothing was written" checks. */
  dump(): string {
    return JSON.stringify([...this.entries]);
  }
}

function attempt<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (e) {
    return Promise.reject(e);
  }
}

/** An outage whose message carries a host path and an address, which must never reach a model. */
export function outage(): UnavailableError {
  return new UnavailableError(
    "[memory:fake] Cannot read: connect ECONNREFUSED 10.1.2.3:4222 at /srv/secret/host/path",
  );
}
