// The jetstream backend's operations over a bound bucket: reads, revision-checked writes, deletes
// whose markers are purged once old, the exact capacity check, and every call's deadline.

import type { StreamInfo } from "@nats-io/jetstream";
import type { KV, KvEntry } from "@nats-io/kv";
import { MAX_ENTRIES } from "../../store/limits.ts";
import { MemoryError, NotFoundError, StaleError, UnavailableError } from "../../store/errors.ts";
import { parseEntry, serializeValid } from "../../store/serialize.ts";
import type { Entry, Info, Item } from "../../store/types.ts";
import { checkCapacity, type ValidWrite } from "../../store/validate.ts";
import type { BackendOps, Call } from "../../store/_store.ts";
import { quote } from "../../store/_text.ts";
import { type Bound, CapacityBound } from "./capacity.ts";
import {
  apiCode,
  BACKEND,
  BucketGoneError,
  checkRevision,
  Deadline,
  exists,
  isWrongLastSequence,
  PREFIX,
  reason,
  STREAM_NOT_FOUND,
  withAbort,
  withDeadline,
} from "./errors.ts";
import { count, headerDescription, type Keyspace, type OldMarker, scan } from "./scan.ts";
import { MAX_WRITE_HEADER_BYTES, STREAM_SEQUENCE_HEADER_BYTES } from "./wire.ts";
import { publish, publishDelete, purgeMarker } from "./write.ts";
import { auditOfScan } from "./audit.ts";
import type { StoreAudit } from "../../store/audit.ts";
import { instanceOf, isPermissionDenied } from "./bind.ts";

// A conditional write that loses a race re-reads and retries; a key that changes this often
// between a read and a write is reported as unavailable rather than retried forever.
const MAX_CAS_ATTEMPTS = 8;
const ENCODER = new TextEncoder();

/** What the backend works with, all of it checked at open. */
export interface BackendConfig extends Omit<Keyspace, "subjectPrefix"> {
  readonly prefix: string;
  readonly readBeforeUpdate: boolean;
  readonly kv: KV;
  /** The stream's max message size (-1: unlimited). */
  readonly maxMsgSize: number;
  /** Whether old delete markers may be purged (the connection holds the purge permission). */
  readonly purge: boolean;
  /** Told once when a purge is refused after all and old markers are kept from then on. */
  readonly warn: (message: string) => void;
  /** The bucket instance in the Scope namespace: creation time, and raft group when clustered. */
  readonly instance: string;
}

type Op = "list" | "read" | "create" | "update" | "delete" | "audit";

/** One key's latest message: a live entry or a delete marker. */
interface Latest {
  readonly live: boolean;
  readonly revision: number;
}

/** The jetstream backend's raw operations. */
export class JetStreamBackend implements BackendOps {
  readonly info: Info;
  readonly #c: BackendConfig;
  readonly #ks: Keyspace;
  // The Scope namespace: the bucket instance (its stream's creation time, and raft group when
  // clustered) and the prefix, so a revision recorded here never authorizes a write in another
  // store, nor in this bucket once it has been deleted and created again or (clustered) restored.
  // It changes when the handle finds its bucket gone and then created again.
  #ns: string;
  // Whether a call found the bucket's stream gone: the next call binds to whatever instance is
  // there now (a new namespace, so no revision from the old one authorizes a write).
  #gone = false;
  // The key's prefix inside the bucket ("alice." or "").
  readonly #keyPrefix: string;
  readonly #capacity = new CapacityBound();
  #purge: boolean;
  // The stream's creation time at the last count.
  #created: string;

  constructor(config: BackendConfig) {
    this.#c = config;
    const { bucket, prefix } = config;
    this.info = { backend: BACKEND, location: prefix === "" ? bucket : `${bucket}/${prefix}` };
    this.#ns = this.#namespace(config.instance);
    this.#keyPrefix = prefix === "" ? "" : `${prefix}.`;
    this.#ks = { ...config, subjectPrefix: `$KV.${bucket}.${this.#keyPrefix}` };
    this.#purge = config.purge;
    this.#created = config.created;
  }

  list(call: Call): Promise<Item[]> {
    return this.#run("list", undefined, call, async (d) => {
      const { latest, oldMarkers } = await scan(this.#ks, d);
      await this.#purgeOld(oldMarkers, d);
      const items: Item[] = [];
      for (const [key, entry] of latest) {
        // Listed when its header parses, as the file backend lists from headers alone.
        const description = headerDescription(entry.value, key);
        if (description !== undefined) items.push({ key, description });
      }
      return items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    });
  }

  audit(call: Call): Promise<StoreAudit> {
    return this.#run("audit", undefined, call, async (d) => {
      const scanned = await scan(this.#ks, d, { illegal: true });
      if (!scanned.complete) {
        throw new UnavailableError(
          `${PREFIX} Cannot audit the store: the scan was cut short before it saw every key`,
        );
      }
      return auditOfScan(scanned);
    });
  }

  // One request, whose timeout the NATS client enforces: no deadline machinery unless the caller
  // can abort.
  async read(key: string, call: Call): Promise<Entry> {
    if (this.#gone) await this.#run("read", key, call, () => Promise.resolve());
    const work = this.#c.kv.get(this.#keyPrefix + key);
    let e: KvEntry | null;
    try {
      e = await (call.signal === undefined
        ? work
        : withAbort(work, call.signal, (cause) =>
          this.#aborted("read", key, cause)));
    } catch (err) {
      throw this.#failure("read", key, err);
    }
    if (e === null || isMarker(e)) {
      throw new NotFoundError(
        `${PREFIX} Cannot read memory ${quote(key)}: no memory has this key`,
        { key },
      );
    }
    const entry = parseEntry(e.value, key);
    if (call.scope !== null && !call.signal?.aborted) {
      call.scope.record(this.#ns, key, checkRevision(e.revision));
    }
    return entry;
  }

  create(w: ValidWrite, call: Call): Promise<void> {
    return this.#run("create", w.key, call, async (d) => {
      const data = ENCODER.encode(serializeValid(w.description, w.content));
      const subject = this.#ks.subjectPrefix + w.key;
      // With a bound from this store's last count or write: one publish that holds only if
      // nothing else was written to the stream since (see capacity.ts).
      const bound = this.#capacity.usable();
      const tried = bound !== undefined && this.#fits(data, STREAM_SEQUENCE_HEADER_BYTES);
      if (tried) {
        try {
          const revision = await publish(this.#c, subject, data, {
            revision: 0,
            streamSeq: bound.seq,
          }, d.left());
          this.#capacity.wrote(bound, revision, 1);
          this.#record(call, d, w.key, revision);
          return;
        } catch (e) {
          if (!isWrongLastSequence(e)) throw e;
        }
      }
      // Refused: the key holds something, or others wrote since the bound. Look at the key
      // first, so a key that holds a memory costs no count.
      let latest: Latest | undefined;
      if (tried) {
        latest = await this.#get(w.key);
        if (latest?.live) throw exists(w.key);
        this.#capacity.contended(true);
      }
      const known = this.#capacity.current()?.seq;
      const counted = await this.#count(d);
      // Nothing was written since this store's last write: next time a bound will do.
      if (counted.seq === known) this.#capacity.contended(false);
      this.#capacity.offer(counted);
      if (counted.live >= MAX_ENTRIES) {
        // A full store still says "exists" for a key it holds: that is the answer a caller can use.
        if (!tried && (await this.#get(w.key))?.live) throw exists(w.key);
        checkCapacity(counted.live, w.key);
      }
      // Expect nothing under the key; when a delete marker is there, expect that marker.
      let expected = latest?.revision ?? 0;
      for (let attempt = 1;; attempt++) {
        try {
          const revision = await publish(this.#c, subject, data, { revision: expected }, d.left());
          this.#capacity.wrote(counted, revision, 1);
          this.#record(call, d, w.key, revision);
          return;
        } catch (e) {
          if (!isWrongLastSequence(e)) throw e;
        }
        const now = await this.#get(w.key);
        if (now?.live) throw exists(w.key);
        if (attempt >= MAX_CAS_ATTEMPTS || d.cancelled) throw this.#churn("create", w.key);
        expected = now?.revision ?? 0;
      }
    });
  }

  update(w: ValidWrite, call: Call): Promise<void> {
    return this.#run("update", w.key, call, async (d) => {
      const data = ENCODER.encode(serializeValid(w.description, w.content));
      const subject = this.#ks.subjectPrefix + w.key;
      const before = this.#capacity.current();
      if (!this.#c.readBeforeUpdate) {
        // Like the file backend: replace, or create (which counts against capacity).
        const latest = await this.#get(w.key);
        let from = before;
        if (!latest?.live) {
          from = await this.#count(d);
          this.#capacity.offer(from);
          checkCapacity(from.live, w.key);
        }
        const revision = await publish(this.#c, subject, data, {}, d.left());
        this.#capacity.wrote(from, revision, 1);
        this.#record(call, d, w.key, revision);
        return;
      }
      const seen = call.scope?.revision(this.#ns, w.key);
      if (seen === undefined || seen <= 0) {
        throw new StaleError(
          `${PREFIX} Cannot update memory ${
            quote(w.key)
          }: this run has not read it; read it first, then update`,
          { key: w.key },
        );
      }
      let revision: number;
      try {
        revision = await publish(this.#c, subject, data, { revision: seen }, d.left());
      } catch (e) {
        if (!isWrongLastSequence(e)) throw e;
        throw new StaleError(
          `${PREFIX} Cannot update memory ${
            quote(w.key)
          }: it changed or was deleted since this run read it; read it again, then update`,
          { key: w.key },
        );
      }
      // Counted as a possible new key: a scope restored from a snapshot could name a delete
      // marker's revision, and then this write brings the key back.
      this.#capacity.wrote(before, revision, 1);
      this.#record(call, d, w.key, revision);
    });
  }

  delete(key: string, call: Call): Promise<boolean> {
    // A revision this run saw can stand in for a look at the key; then the run loses its
    // authority over the key, whatever happens.
    const seen = call.scope?.revision(this.#ns, key);
    call.scope?.forget(this.#ns, key);
    return this.#run("delete", key, call, async (d) => {
      const subject = this.#ks.subjectPrefix + key;
      for (let attempt = 1;; attempt++) {
        const before = this.#capacity.current();
        const guess = attempt === 1 && seen !== undefined && seen > 0;
        let revision: number;
        if (guess) revision = seen;
        else {
          const latest = await this.#get(key);
          if (!latest?.live) return false;
          revision = latest.revision;
        }
        // Only the deleter whose expected revision is still the latest writes the marker.
        let marker: number;
        try {
          marker = await publishDelete(this.#c, subject, revision, d.left());
        } catch (e) {
          if (!isWrongLastSequence(e)) throw e;
          if (attempt >= MAX_CAS_ATTEMPTS || d.cancelled) throw this.#churn("delete", key);
          continue;
        }
        // A looked-at key was live just before its marker: one key fewer. A scope's revision is
        // trusted for the write, not for the bound.
        this.#capacity.wrote(before, marker, guess ? 0 : -1);
        // The marker stays: purging it now is not durable across a server crash (see MARKERS).
        return true;
      }
    });
  }

  #namespace(instance: string): string {
    return `${BACKEND}:${this.#c.bucket}@${instance}/${this.#c.prefix}`;
  }

  // After a call found the bucket gone: binds to the instance there now. A new instance gets a
  // new Scope namespace, and the capacity bounds of the old one are dropped. Still gone: says so.
  async #rebind(): Promise<void> {
    let si: StreamInfo;
    try {
      si = await this.#c.jsm.streams.info(this.#c.stream);
    } catch (e) {
      if (apiCode(e) === STREAM_NOT_FOUND) throw new BucketGoneError("the bucket is gone");
      throw e;
    }
    const ns = this.#namespace(instanceOf(si));
    if (ns !== this.#ns) {
      this.#ns = ns;
      this.#capacity.reset();
      this.#created = si.created;
    }
    this.#gone = false;
  }

  // Counts the keyspace. A bucket deleted and created again since the last count makes every
  // bound taken before worthless (its sequences belong to another stream), so they are dropped.
  async #count(d: Deadline): Promise<Bound> {
    const counted = await count(this.#ks, d, {
      bound: this.#capacity.current(),
      created: this.#created,
    });
    await this.#purgeOld(counted.oldMarkers, d);
    if (counted.created !== this.#created) {
      this.#capacity.reset();
      this.#created = counted.created;
    }
    return counted;
  }

  // Purges delete markers old enough to go (see MARKERS), a few at a time and within the call's
  // deadline, so churn leaves nothing to scan past for long.
  async #purgeOld(markers: readonly OldMarker[], d: Deadline): Promise<void> {
    for (let i = 0; i < markers.length && this.#purge && !d.cancelled; i += 16) {
      await Promise.all(markers.slice(i, i + 16).map((m) => this.#purgeMarker(m.subject, m.seq)));
    }
  }

  // Removes a delete marker (and anything older under its subject; a write made after it has a
  // higher sequence and stays). The delete already happened: a purge that fails leaves the
  // marker, which every call treats as absent.
  async #purgeMarker(subject: string, marker: number): Promise<void> {
    if (!this.#purge) return;
    try {
      await purgeMarker(this.#c, subject, marker);
    } catch (e) {
      // Refused for good (no permission, or the stream denies purges): fall back to markers,
      // and say so once. A timeout or a lost connection just leaves this one marker.
      const denied = isPermissionDenied(e);
      // Purges run a few at once: the first refusal says so, the others are quiet.
      if ((denied || apiCode(e) !== undefined) && this.#purge) {
        this.#purge = false;
        this.#c.warn(
          `${PREFIX} Memory bucket ${quote(this.#c.bucket)}: ${
            denied
              ? `this NATS user may not purge the bucket's stream (grant publish permission on $JS.API.STREAM.PURGE.${this.#c.stream})`
              : `the server refused to purge the bucket's stream (${
                reason(e, this.#c.bucket, `${this.#c.timeout} ms`)
              })`
          }, so delete markers are now kept for good, which slows listing as they accumulate`,
        );
      }
    }
  }

  // Whether `data` plus the write's headers and `extra` header bytes fits the bucket's values.
  #fits(data: Uint8Array, extra: number): boolean {
    const max = this.#c.maxMsgSize;
    return max <= 0 || data.length + MAX_WRITE_HEADER_BYTES + extra <= max;
  }

  // Records a revision in the call's scope, unless the caller was already told the call failed:
  // a scope only learns what its run saw.
  #record(call: Call, d: Deadline, key: string, revision: number): void {
    if (!d.cancelled && !call.signal?.aborted) call.scope?.record(this.#ns, key, revision);
  }

  // The key's latest message, read from the stream leader; `undefined` when the key holds
  // nothing. During a leader change a read can miss a write acknowledged just before it (4 of
  // 70,059 reads in a nemesis run, 4 to 6 s into an isolated or paused leader): a write built on
  // such a read carries its revision and fails with StaleError, never overwriting the newer value.
  async #get(key: string): Promise<Latest | undefined> {
    const e = await this.#c.kv.get(this.#keyPrefix + key);
    if (e === null) return undefined;
    return { live: !isMarker(e), revision: checkRevision(e.revision) };
  }

  #churn(op: "create" | "delete", key: string): UnavailableError {
    return new UnavailableError(
      `${PREFIX} Cannot ${op} memory ${
        quote(key)
      }: the key kept changing under concurrent writers; try again`,
      { key },
    );
  }

  #head(op: Op, key: string | undefined): string {
    const verb = op === "list"
      ? "list memories"
      : op === "audit"
      ? "audit the store"
      : `${op} memory`;
    return `${PREFIX} Cannot ${verb}${key === undefined ? "" : ` ${quote(key)}`}`;
  }

  #aborted(op: Op, key: string | undefined, cause: unknown): UnavailableError {
    return new UnavailableError(`${this.#head(op, key)}: the call was aborted${uncertain(op)}`, {
      key,
      cause,
    });
  }

  // Anything that is not a MemoryError becomes an UnavailableError that names the kind of
  // failure but never the server's address. A failure that shows the bucket gone is remembered.
  #failure(op: Op, key: string | undefined, e: unknown): MemoryError {
    if (e instanceof MemoryError) return e;
    if (isBucketGone(e)) this.#gone = true;
    return new UnavailableError(
      `${this.#head(op, key)}: ${reason(e, this.#c.bucket, `${this.#c.timeout} ms`)}${
        uncertain(op)
      }`,
      { key, cause: e },
    );
  }

  // Runs one call of several requests under its deadline and signal.
  async #run<T>(
    op: Op,
    key: string | undefined,
    call: Call,
    fn: (d: Deadline) => Promise<T>,
  ): Promise<T> {
    const { timeout } = this.#c;
    const d = new Deadline(timeout);
    const work = this.#gone ? this.#rebind().then(() => fn(d)) : fn(d);
    try {
      return await withDeadline(work, timeout, call.signal, (why, cause) => {
        d.cancel();
        return why === "timeout"
          ? new UnavailableError(
            `${this.#head(op, key)}: NATS did not answer within ${timeout} ms${uncertain(op)}`,
            { key },
          )
          : this.#aborted(op, key, cause);
      });
    } catch (e) {
      throw this.#failure(op, key, e);
    } finally {
      d.cancel();
    }
  }
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

function isMarker(e: KvEntry): boolean {
  const op = e.operation;
  return op === "DEL" || op === "PURGE";
}
