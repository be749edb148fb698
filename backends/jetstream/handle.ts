// What a jetstream store handle's calls share: the bound bucket and its Scope namespace, the
// capacity bound, the history step (step.ts), the key's latest message, and the deadline, abort
// and failure wording every call runs under. The write paths (create.ts, update.ts, delete.ts,
// commit.ts) work through it.

import type { StreamInfo } from "@nats-io/jetstream";
import type { MsgHdrs } from "@nats-io/nats-core";
import { MemoryError, StaleError, UnavailableError } from "../../store/errors.ts";
import type { Call } from "../../store/backend.ts";
import type { ValidWrite } from "../../store/validate.ts";
import { quote } from "../../store/text.ts";
import { type Bound, CapacityBound } from "./capacity.ts";
import {
  apiCode,
  BACKEND,
  BucketGoneError,
  checkRevision,
  Deadline,
  PREFIX,
  reason,
  STREAM_NOT_FOUND,
  withDeadline,
} from "./errors.ts";
import { instanceOf } from "./bind.ts";
import { getMessage, type MessageSource } from "./messages.ts";
import { VERSION_HEADER_BYTES } from "./provenance.ts";
import { count, isMarkerMessage, type Keyspace } from "./scan.ts";
import { NextRun } from "../../store/next_run.ts";
import type { HistoryStep, Landed } from "./step.ts";
import { MAX_WRITE_HEADER_BYTES } from "./wire.ts";
import type { WriteTarget } from "./write.ts";

/** A conditional write that loses a race re-reads and retries at most this many times. */
export const MAX_CAS_ATTEMPTS = 8;

/** What the backend works with, all of it checked at open. */
export interface BackendConfig extends Omit<Keyspace, "subjectPrefix">, MessageSource {
  readonly prefix: string;
  readonly readBeforeUpdate: boolean;
  /** The stream's max message size (-1: unlimited). */
  readonly maxMsgSize: number;
  /** The bucket instance in the Scope namespace: creation time, and raft group when clustered. */
  readonly instance: string;
  /** The history step: the keeper with history on, `NoHistory` with it off. */
  readonly history: HistoryStep;
  /** `headers()` from the NATS client modules the opener loaded (see `write.ts`). */
  readonly headers: WriteTarget["headers"];
}

/** What a call does, as its failures name it. */
export type Op = "list" | "read" | "create" | "update" | "delete" | "audit" | "history";

/** One key's latest message: a live entry or a delete marker. */
export interface Latest {
  readonly live: boolean;
  readonly revision: number;
  readonly header: MsgHdrs | undefined;
}

/** A call and its deadline, as a write path carries them. */
export interface CallAt {
  readonly call: Call;
  readonly d: Deadline;
}

/** What a call run under `Handle.run` is. */
export interface RunCall {
  readonly op: Op;
  readonly key: string | undefined;
  readonly call: Call;
  /** How many of the store's timeouts the call may take (default 1). */
  readonly timeouts?: number;
}

/** A create or update as its write path gets it. */
export interface WriteCall {
  readonly w: ValidWrite;
  readonly call: Call;
  readonly d: Deadline;
  /** The entry, serialized. */
  readonly data: Uint8Array;
}

/** A delete as its write path gets it. */
export interface DeleteCall {
  readonly key: string;
  readonly call: Call;
  /**
   * The revision this run read or wrote, taken from the call's scope before the call (the run
   * loses its authority over the key, whatever happens).
   */
  readonly seen: number | undefined;
  readonly d: Deadline;
}

/** The state one store handle's calls share. */
export class Handle {
  readonly c: BackendConfig;
  readonly ks: Keyspace;
  readonly capacity = new CapacityBound();
  /** Whether a delete's guess (the revision its run saw) was last found stale (delete.ts). */
  readonly guesses = { contended: false };
  /** The history step of every write. */
  readonly history: HistoryStep;
  // The Scope namespace: the bucket instance (its stream's creation time, and raft group when
  // clustered) and the prefix, so a revision recorded here never authorizes a write in another
  // store, nor in this bucket once it has been deleted and created again or (clustered) restored.
  // It changes when the handle finds its bucket gone and then created again.
  #ns: string;
  // Whether a call found the bucket's stream gone: the next call binds to whatever instance is
  // there now (a new namespace, so no revision from the old one authorizes a write).
  #gone = false;
  // The stream's creation time at the last count.
  #created: string;
  // Counts, shared by the calls that ask while one runs (store/next_run.ts).
  readonly #counts = new NextRun(() => this.#countNow());
  // This handle's writes in flight (create, update, delete).
  #writing = 0;

  constructor(config: BackendConfig) {
    this.c = config;
    const keyPrefix = config.prefix === "" ? "" : `${config.prefix}.`;
    this.ks = { ...config, subjectPrefix: `$KV.${config.bucket}.${keyPrefix}` };
    this.#ns = this.#namespace(config.instance);
    this.#created = config.created;
    this.history = config.history;
  }

  /** The Scope namespace revisions are recorded in now. */
  get ns(): string {
    return this.#ns;
  }

  /** Whether a call found the bucket gone (the next call binds again). */
  get gone(): boolean {
    return this.#gone;
  }

  subject(key: string): string {
    return this.ks.subjectPrefix + key;
  }

  /**
   * After a create or update of `w.key` landed at `w.revision`: the scope learns its revision,
   * the history step remembers it.
   */
  wrote(
    x: CallAt,
    w: { readonly key: string; readonly revision: number } & Landed,
  ): void {
    this.record(x, w);
    this.history.wrote(w.key, w);
  }

  /**
   * Records a revision in the call's scope, unless the caller was already told the call failed:
   * a scope only learns what its run saw.
   */
  record(x: CallAt, w: { readonly key: string; readonly revision: number }): void {
    if (!x.d.cancelled && !x.call.signal?.aborted) {
      x.call.scope?.record(this.#ns, w.key, w.revision);
    }
  }

  /**
   * Counts the keyspace: a count that started after this call, shared with the calls that asked
   * while it waited (store/next_run.ts). A bucket deleted and created again since the last count
   * makes every bound taken before worthless (its sequences belong to another stream), so they
   * are dropped.
   */
  count(): Promise<Bound> {
    return this.#counts.next();
  }

  async #countNow(): Promise<Bound> {
    // Its own deadline: it answers every call waiting on it, whichever of them gives up first.
    const d = new Deadline(this.c.timeout);
    try {
      const counted = await count(this.ks, {
        d,
        prior: { bound: this.capacity.current(), created: this.#created },
      });
      await this.history.listed({ markers: [], oldMarkers: counted.oldMarkers }, d);
      if (counted.created !== this.#created) {
        this.capacity.reset();
        this.#created = counted.created;
      }
      return counted;
    } finally {
      d.cancel();
    }
  }

  /**
   * Whether the calling write is this handle's only one in flight: a create's bound, which
   * expects the stream's last sequence, would fail against this handle's own other writes.
   */
  get writingAlone(): boolean {
    return this.#writing <= 1;
  }

  /** Whether `data` plus the write's headers and `extra` header bytes fits the bucket's values. */
  fits(data: Uint8Array, extra: number): boolean {
    const max = this.c.maxMsgSize;
    const version = this.history.on ? VERSION_HEADER_BYTES : 0;
    return max <= 0 || data.length + MAX_WRITE_HEADER_BYTES + version + extra <= max;
  }

  /**
   * The key's latest message, read from the stream leader; `undefined` when the key holds
   * nothing. During a leader change a read can miss a write acknowledged just before it (4 of
   * 70,059 reads in a nemesis run, 4 to 6 s into an isolated or paused leader): a write built on
   * such a read carries its revision and fails with StaleError, never overwriting the newer value.
   */
  async get(key: string): Promise<Latest | undefined> {
    const m = await getMessage(this.c, { stream: this.c.stream, last_by_subj: this.subject(key) });
    if (m === null) return undefined;
    return { live: !isMarkerMessage(m.header), revision: checkRevision(m.seq), header: m.header };
  }

  /** Runs one call of several requests under its deadline and signal. */
  async run<T>(c: RunCall, fn: (d: Deadline) => Promise<T>): Promise<T> {
    const { op, key, call } = c;
    const timeout = this.c.timeout * (c.timeouts ?? 1);
    const d = new Deadline(timeout);
    const writes = op === "create" || op === "update" || op === "delete";
    if (writes) this.#writing++;
    const work = this.#gone ? this.#rebind().then(() => fn(d)) : fn(d);
    try {
      return await withDeadline(work, {
        ms: timeout,
        signal: call.signal,
        fail: (why, cause) => {
          d.cancel();
          return why === "timeout"
            ? new UnavailableError(
              `${head(op, key)}: NATS did not answer within ${timeout} ms${uncertain(op)}`,
              { key },
            )
            : aborted(c, cause);
        },
      });
    } catch (e) {
      throw this.failure(c, e);
    } finally {
      if (writes) this.#writing--;
      d.cancel();
    }
  }

  /**
   * Anything that is not a MemoryError becomes an UnavailableError that names the kind of
   * failure but never the server's address. A failure that shows the bucket gone is remembered.
   */
  failure(c: { readonly op: Op; readonly key: string | undefined }, e: unknown): MemoryError {
    const { op, key } = c;
    if (e instanceof MemoryError) return e;
    if (isBucketGone(e)) this.#gone = true;
    return new UnavailableError(
      `${head(op, key)}: ${reason(e, this.c.bucket, `${this.c.timeout} ms`)}${uncertain(op)}`,
      { key, cause: e },
    );
  }

  #namespace(instance: string): string {
    return `${BACKEND}:${this.c.bucket}@${instance}/${this.c.prefix}`;
  }

  // After a call found the bucket gone: binds to the instance there now. A new instance gets a
  // new Scope namespace, and the capacity bounds of the old one are dropped. Still gone: says so.
  async #rebind(): Promise<void> {
    let si: StreamInfo;
    try {
      si = await this.c.jsm.streams.info(this.c.stream);
    } catch (e) {
      if (apiCode(e) === STREAM_NOT_FOUND) throw new BucketGoneError("the bucket is gone");
      throw e;
    }
    const ns = this.#namespace(instanceOf(si));
    if (ns !== this.#ns) {
      this.#ns = ns;
      this.capacity.reset();
      this.history.reset();
      this.#created = si.created;
    }
    this.#gone = false;
  }
}

/** A call aborted by its caller's signal. */
export function aborted(
  c: { readonly op: Op; readonly key: string | undefined },
  cause: unknown,
): UnavailableError {
  const { op, key } = c;
  return new UnavailableError(`${head(op, key)}: the call was aborted${uncertain(op)}`, {
    key,
    cause,
  });
}

/** A revision-checked write whose revision no longer holds. */
export function stale(key: string): StaleError {
  return new StaleError(
    `${PREFIX} Cannot update memory ${
      quote(key)
    }: it changed or was deleted since this run read it; read it again, then update`,
    { key },
  );
}

/** A write that lost the race for its key every time it tried. */
export function churn(op: "create" | "update" | "delete", key: string): UnavailableError {
  return new UnavailableError(
    `${PREFIX} Cannot ${op} memory ${
      quote(key)
    }: the key kept changing under concurrent writers; try again`,
    { key },
  );
}

function head(op: Op, key: string | undefined): string {
  const verb = op === "list"
    ? "list memories"
    : op === "audit"
    ? "audit the store"
    : op === "history"
    ? "read the history of memory"
    : `${op} memory`;
  return `${PREFIX} Cannot ${verb}${key === undefined ? "" : ` ${quote(key)}`}`;
}

function uncertain(op: Op): string {
  return op === "create" || op === "update" || op === "delete"
    ? "; the write may or may not have been applied"
    : "";
}

// Whether a failure shows the bucket's stream gone.
function isBucketGone(e: unknown): boolean {
  return apiCode(e) === STREAM_NOT_FOUND || (e instanceof Error && e.name === "BucketGoneError");
}
