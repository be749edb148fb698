// The jetstream backend's operations over a bound bucket: reads, revision-checked writes that
// are their own versions (history on), deletes, the exact capacity check, and every call's
// deadline.

import type { StreamInfo } from "@nats-io/jetstream";
import type { MsgHdrs } from "@nats-io/nats-core";
import { MAX_ENTRIES } from "../../store/limits.ts";
import { MemoryError, NotFoundError, StaleError, UnavailableError } from "../../store/errors.ts";
import { parseEntry, serializeValid } from "../../store/serialize.ts";
import type { Entry, Info, Item } from "../../store/types.ts";
import { checkCapacity, type ValidWrite } from "../../store/validate.ts";
import type { BackendOps, Call } from "../../store/_store.ts";
import type { HistoryOps } from "../../store/history.ts";
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
import { count, headerDescription, isMarkerMessage, type Keyspace, scan } from "./scan.ts";
import { MAX_WRITE_HEADER_BYTES, STREAM_SEQUENCE_HEADER_BYTES } from "./wire.ts";
import { publish, publishDelete, type WriteTarget } from "./write.ts";
import { auditOfScan } from "./audit.ts";
import type { StoreAudit } from "../../store/audit.ts";
import { instanceOf } from "./bind.ts";
import { MarkerPurger } from "./markers.ts";
import type { Keeper } from "./keeper.ts";
import { getMessage, movedOf } from "./mover.ts";
import { type Link, readRecord, VERSION_HEADER_BYTES, type VersionRecord } from "./provenance.ts";
import { histories, historyReads, verify } from "./history.ts";

// A conditional write that loses a race re-reads and retries; a key that changes this often
// between a read and a write is reported as unavailable rather than retried forever.
const MAX_CAS_ATTEMPTS = 8;
const ENCODER = new TextEncoder();
const EMPTY = new Uint8Array(0);

/** What the backend works with, all of it checked at open. */
export interface BackendConfig extends Omit<Keyspace, "subjectPrefix"> {
  readonly prefix: string;
  readonly readBeforeUpdate: boolean;
  /** The stream's max message size (-1: unlimited). */
  readonly maxMsgSize: number;
  /** Whether old delete markers may be purged (the connection holds the purge permission). */
  readonly purge: boolean;
  /** Told once when a purge is refused after all and old markers are kept from then on. */
  readonly warn: (message: string) => void;
  /** The bucket instance in the Scope namespace: creation time, and raft group when clustered. */
  readonly instance: string;
  /**
   * Whether the bucket keeps every message of a key (no per-key limit): then a write with history
   * off replaces what the key held (a rollup) rather than leaving it behind.
   */
  readonly keepsAll: boolean;
  /** The history's write side, with history on. */
  readonly keeper: Keeper | undefined;
  /** `headers()` from the NATS client modules the opener loaded (see `write.ts`). */
  readonly headers: WriteTarget["headers"];
}

type Op = "list" | "read" | "create" | "update" | "delete" | "audit" | "history";

/** One key's latest message: a live entry or a delete marker, and what it chains to. */
interface Latest {
  readonly live: boolean;
  readonly revision: number;
  /** The version's hash, when the message has a record. */
  readonly link: Link | undefined;
}

/** The jetstream backend's raw operations. */
export class JetStreamBackend implements BackendOps {
  readonly info: Info;
  readonly history: HistoryOps | undefined;
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
  readonly #markers: MarkerPurger;
  readonly #keeper: Keeper | undefined;
  // The stream's creation time at the last count.
  #created: string;

  constructor(config: BackendConfig) {
    this.#c = config;
    const { bucket, prefix } = config;
    this.info = { backend: BACKEND, location: prefix === "" ? bucket : `${bucket}/${prefix}` };
    this.#ns = this.#namespace(config.instance);
    this.#keyPrefix = prefix === "" ? "" : `${prefix}.`;
    this.#ks = { ...config, subjectPrefix: `$KV.${bucket}.${this.#keyPrefix}` };
    this.#markers = new MarkerPurger(config, config.purge);
    this.#created = config.created;
    this.#keeper = config.keeper;
    this.history = config.keeper === undefined ? undefined : this.#historyOps(config.keeper);
  }

  list(call: Call): Promise<Item[]> {
    return this.#run("list", undefined, call, async (d) => {
      const { latest, oldMarkers, markers } = await scan(this.#ks, d);
      // With history, a marker on a key's subject is a delete whose move was cut short.
      if (this.#keeper !== undefined) { for (const m of markers) this.#keeper.moveSoon(m.key); }
      else await this.#markers.purgeOld(oldMarkers, d);
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
      const audit = auditOfScan(scanned);
      const keeper = this.#keeper;
      if (keeper === undefined) return audit;
      return { ...audit, history: verify(await histories(keeper.target, d)) };
    });
  }

  // One request, whose timeout the NATS client enforces: no deadline machinery unless the caller
  // can abort.
  async read(key: string, call: Call): Promise<Entry> {
    if (this.#gone) await this.#run("read", key, call, () => Promise.resolve());
    const work = getMessage(this.#c, this.#c.stream, { last_by_subj: this.#subject(key) });
    let m: Awaited<typeof work>;
    try {
      m = await (call.signal === undefined
        ? work
        : withAbort(work, call.signal, (cause) =>
          this.#aborted("read", key, cause)));
    } catch (err) {
      throw this.#failure("read", key, err);
    }
    if (m === null || isMarkerMessage(m.header)) {
      throw new NotFoundError(
        `${PREFIX} Cannot read memory ${quote(key)}: no memory has this key`,
        { key },
      );
    }
    const entry = parseEntry(m.data, key);
    const revision = checkRevision(m.seq);
    this.#keeper?.saw(key, revision, m.header, m.data);
    if (call.scope !== null && !call.signal?.aborted) {
      call.scope.record(this.#ns, key, revision);
    }
    return entry;
  }

  create(w: ValidWrite, call: Call): Promise<void> {
    return this.#run("create", w.key, call, async (d) => {
      const data = ENCODER.encode(serializeValid(w.description, w.content));
      if (this.#keeper !== undefined) return await this.#createVersion(w, call, d, data);
      const subject = this.#subject(w.key);
      // With a bound from this store's last count or write: one publish that holds only if
      // nothing else was written to the stream since (see capacity.ts).
      const bound = this.#capacity.usable();
      const tried = bound !== undefined && this.#fits(data, STREAM_SEQUENCE_HEADER_BYTES);
      if (tried) {
        try {
          const revision = await publish(
            this.#c,
            subject,
            data,
            {
              revision: 0,
              streamSeq: bound.seq,
            },
            d.left(),
            this.#c.keepsAll ? "rollup" : undefined,
          );
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
      const counted = await this.#countForCreate(w.key, d, !tried);
      // Expect nothing under the key; when a delete marker is there, expect that marker.
      let expected = latest?.revision ?? 0;
      for (let attempt = 1;; attempt++) {
        try {
          const revision = await publish(
            this.#c,
            subject,
            data,
            { revision: expected },
            d.left(),
            this.#c.keepsAll ? "rollup" : undefined,
          );
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

  // create() with history: the key and its history's newest version are looked at together (a
  // key that holds a memory costs one round trip), then one publish, revision-checked against
  // what the look found and, with a bound from this store's last count or write, against the
  // stream's last sequence (see capacity.ts). A key that holds nothing on its subject chains to
  // its history's newest version (a deleted key's delete); over a delete marker, to the marker.
  async #createVersion(w: ValidWrite, call: Call, d: Deadline, data: Uint8Array): Promise<void> {
    const keeper = this.#keeper!;
    const bound = this.#capacity.usable();
    let counted = bound === undefined ? await this.#countForCreate(w.key, d, true) : undefined;
    for (let attempt = 1;; attempt++) {
      const [latest, moved] = await Promise.all([
        this.#get(w.key),
        keeper.linkForCreate(w.key),
      ]);
      if (latest?.live) throw exists(w.key);
      const expected = latest?.revision ?? 0;
      const v = this.#version(w.key, "create", call, latest ? latest.link : moved, data);
      const useBound = counted === undefined && this.#fits(data, STREAM_SEQUENCE_HEADER_BYTES);
      try {
        const revision = await publish(
          this.#c,
          this.#subject(w.key),
          data,
          {
            revision: expected,
            ...(useBound ? { streamSeq: bound!.seq } : {}),
          },
          d.left(),
          v.headers,
        );
        this.#capacity.wrote(counted ?? bound, revision, 1);
        this.#wrote(call, d, w.key, revision, expected, v, data, expected > 0);
        return;
      } catch (e) {
        if (!isWrongLastSequence(e)) throw e;
      }
      if (attempt >= MAX_CAS_ATTEMPTS || d.cancelled) throw this.#churn("create", w.key);
      // Others wrote since the bound (or to the key since the look): count before trying again.
      if (counted === undefined) {
        this.#capacity.contended(true);
        counted = await this.#countForCreate(w.key, d, true);
      }
    }
  }

  // The count a create goes by: refuses a full store (one that holds `key` says "exists" when
  // `look` asks for it: that is the answer a caller can use).
  async #countForCreate(key: string, d: Deadline, look: boolean): Promise<Bound> {
    const known = this.#capacity.current()?.seq;
    const counted = await this.#count(d);
    // Nothing was written since this store's last write: next time a bound will do.
    if (counted.seq === known) this.#capacity.contended(false);
    this.#capacity.offer(counted);
    if (counted.live >= MAX_ENTRIES) {
      if (look && (await this.#get(key))?.live) throw exists(key);
      checkCapacity(counted.live, key);
    }
    return counted;
  }

  update(w: ValidWrite, call: Call): Promise<void> {
    return this.#run("update", w.key, call, async (d) => {
      const data = ENCODER.encode(serializeValid(w.description, w.content));
      const subject = this.#subject(w.key);
      const before = this.#capacity.current();
      if (!this.#c.readBeforeUpdate && !call.checked) {
        return await this.#replace(w, call, d, data);
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
      const over = this.#keeper === undefined ? undefined : await this.#keeper.linkAt(w.key, seen);
      let revision: number;
      let v: Written;
      try {
        v = this.#version(w.key, over?.marker ? "create" : "update", call, over?.link, data);
        revision = await publish(
          this.#c,
          subject,
          data,
          { revision: seen },
          d.left(),
          v.headers ?? (this.#c.keepsAll ? "rollup" : undefined),
        );
      } catch (e) {
        if (!isWrongLastSequence(e)) throw e;
        throw stale(w.key);
      }
      // Counted as a possible new key: a scope restored from a snapshot could name a delete
      // marker's revision, and then this write brings the key back.
      this.#capacity.wrote(before, revision, 1);
      this.#wrote(call, d, w.key, revision, seen, v, data, over?.marker ?? false);
    });
  }

  delete(key: string, call: Call): Promise<boolean> {
    // A revision this run saw can stand in for a look at the key; then the run loses its
    // authority over the key, whatever happens.
    const seen = call.scope?.revision(this.#ns, key);
    call.scope?.forget(this.#ns, key);
    return this.#run("delete", key, call, async (d) => {
      if (call.checked) return await this.#checkedDelete(key, call, seen, d);
      for (let attempt = 1;; attempt++) {
        const before = this.#capacity.current();
        const guess = attempt === 1 && seen !== undefined && seen > 0;
        let revision: number;
        let link: Link | undefined;
        if (guess) {
          revision = seen;
          link = (await this.#keeper?.linkAt(key, seen))?.link;
        } else {
          const latest = await this.#get(key);
          if (!latest?.live) return false;
          revision = latest.revision;
          link = latest.link;
        }
        // Only the deleter whose expected revision is still the latest writes the marker.
        let marker: number;
        let v: Written;
        try {
          v = this.#version(key, "delete", call, link, EMPTY);
          marker = await publishDelete(this.#c, this.#subject(key), revision, d.left(), v.headers);
        } catch (e) {
          if (!isWrongLastSequence(e)) throw e;
          if (attempt >= MAX_CAS_ATTEMPTS || d.cancelled) throw this.#churn("delete", key);
          continue;
        }
        // A looked-at key was live just before its marker: one key fewer. A scope's revision is
        // trusted for the write, not for the bound.
        this.#capacity.wrote(before, marker, guess ? 0 : -1);
        // With history, the key's versions move out and its subject is emptied; without, the
        // marker stays (see MARKERS in scan.ts).
        if (v.record !== undefined) {
          await this.#keeper?.deleted(key, marker, revision, v.record, d);
        }
        return true;
      }
    });
  }

  // A delete that writes its marker only at the revision this run read or wrote (see Call).
  async #checkedDelete(
    key: string,
    call: Call,
    seen: number | undefined,
    d: Deadline,
  ): Promise<boolean> {
    const refused = (why: string) =>
      new StaleError(`${PREFIX} Cannot delete memory ${quote(key)}: ${why}`, { key });
    if (seen === undefined || seen <= 0) {
      throw refused("this run has not read it; read it first, then delete");
    }
    const before = this.#capacity.current();
    const link = (await this.#keeper?.linkAt(key, seen))?.link;
    const v = this.#version(key, "delete", call, link, EMPTY);
    let marker: number;
    try {
      marker = await publishDelete(this.#c, this.#subject(key), seen, d.left(), v.headers);
    } catch (e) {
      if (!isWrongLastSequence(e)) throw e;
      throw refused("it changed or was deleted since this run read it; read it again, then delete");
    }
    this.#capacity.wrote(before, marker, 0);
    if (v.record !== undefined) await this.#keeper?.deleted(key, marker, seen, v.record, d);
    return true;
  }

  // update() with readBeforeUpdate off: like the file backend, replace, or create (which counts
  // against capacity). With history, revision-checked against the key's newest message, so each
  // version chains to the one it replaced; a race re-reads and writes again.
  async #replace(w: ValidWrite, call: Call, d: Deadline, data: Uint8Array): Promise<void> {
    for (let attempt = 1;; attempt++) {
      const latest = await this.#get(w.key);
      let from = this.#capacity.current();
      if (!latest?.live) {
        from = await this.#count(d);
        this.#capacity.offer(from);
        checkCapacity(from.live, w.key);
      }
      const link = latest?.link ??
        (latest === undefined ? await this.#keeper?.linkForCreate(w.key) : undefined);
      const v = this.#version(w.key, latest?.live ? "update" : "create", call, link, data);
      const expect = this.#keeper === undefined ? {} : { revision: latest?.revision ?? 0 };
      let revision: number;
      try {
        revision = await publish(
          this.#c,
          this.#subject(w.key),
          data,
          expect,
          d.left(),
          v.headers ?? (this.#c.keepsAll ? "rollup" : undefined),
        );
      } catch (e) {
        if (!isWrongLastSequence(e)) throw e;
        if (attempt >= MAX_CAS_ATTEMPTS || d.cancelled) throw this.#churn("update", w.key);
        continue;
      }
      this.#capacity.wrote(from, revision, 1);
      const expected = latest?.revision ?? 0;
      this.#wrote(call, d, w.key, revision, expected, v, data, latest?.live === false);
      return;
    }
  }

  // The history this store keeps: reads of the history stream and the bucket's (history.ts), and
  // writes checked against the key's newest version.
  #historyOps(keeper: Keeper): HistoryOps {
    return {
      ...historyReads(
        keeper.target,
        this.#ks,
        (key, call, fn) => this.#run("history", key, call, fn),
      ),
      commitIf: (key, expected, write, call) =>
        this.#run(
          write === null ? "delete" : "update",
          key,
          call,
          (d) => this.#commitIf(key, expected, write, call, d),
        ),
    };
  }

  // Writes (or deletes) `key` as a new version only if its newest version is still `expected`.
  async #commitIf(
    key: string,
    expected: string | null,
    write: ValidWrite | null,
    call: Call,
    d: Deadline,
  ): Promise<string> {
    const keeper = this.#keeper!;
    const latest = await this.#get(key);
    // A deleted key whose versions were moved holds nothing on its subject: its newest version is
    // the last one moved.
    const moved = latest === undefined ? await movedOf(keeper.target, key) : undefined;
    const head = latest?.revision ?? (moved!.to > 0 ? moved!.to : undefined);
    if (String(head ?? null) !== String(expected)) throw stale(key);
    const live = latest?.live ?? false;
    const link = latest !== undefined ? latest.link : moved!.last;
    const subject = this.#subject(key);
    const before = this.#capacity.current();
    if (write === null) {
      if (!live) return String(head ?? 0);
      const v = this.#version(key, "delete", call, link, EMPTY);
      let marker: number;
      try {
        marker = await publishDelete(this.#c, subject, head!, d.left(), v.headers);
      } catch (e) {
        if (!isWrongLastSequence(e)) throw e;
        throw stale(key);
      }
      this.#capacity.wrote(before, marker, -1);
      call.scope?.forget(this.#ns, key);
      await keeper.deleted(key, marker, head!, v.record!, d);
      return String(marker);
    }
    const data = ENCODER.encode(serializeValid(write.description, write.content));
    let from = before;
    if (!live) {
      // Bringing a deleted key back is a create: capacity applies.
      from = await this.#count(d);
      this.#capacity.offer(from);
      checkCapacity(from.live, key);
    }
    const v = this.#version(key, live ? "update" : "create", call, link, data);
    let revision: number;
    try {
      revision = await publish(
        this.#c,
        subject,
        data,
        {
          revision: latest?.revision ?? 0,
        },
        d.left(),
        v.headers,
      );
    } catch (e) {
      if (!isWrongLastSequence(e)) throw e;
      throw stale(key);
    }
    this.#capacity.wrote(from, revision, 1);
    this.#wrote(call, d, key, revision, latest?.revision ?? 0, v, data, latest?.live === false);
    return String(revision);
  }

  #subject(key: string): string {
    return this.#ks.subjectPrefix + key;
  }

  // The headers that make a write its own version (history on), or none.
  #version(
    key: string,
    op: "create" | "update" | "delete",
    call: Call,
    link: Link | undefined,
    data: Uint8Array,
  ): Written {
    return this.#keeper?.version(key, op, call, link, data) ??
      { headers: undefined, record: undefined };
  }

  // After a write of `data` landed at `revision` over `expected`: the scope learns its revision,
  // the history remembers it.
  #wrote(
    call: Call,
    d: Deadline,
    key: string,
    revision: number,
    expected: number,
    v: Written,
    data: Uint8Array,
    overMarker: boolean,
  ): void {
    this.#record(call, d, key, revision);
    if (v.record !== undefined) {
      this.#keeper?.wrote(key, revision, expected, v.record, data, overMarker);
    }
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
      this.#keeper?.reset();
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
    if (this.#keeper === undefined) await this.#markers.purgeOld(counted.oldMarkers, d);
    if (counted.created !== this.#created) {
      this.#capacity.reset();
      this.#created = counted.created;
    }
    return counted;
  }

  // Whether `data` plus the write's headers and `extra` header bytes fits the bucket's values.
  #fits(data: Uint8Array, extra: number): boolean {
    const max = this.#c.maxMsgSize;
    const version = this.#keeper === undefined ? 0 : VERSION_HEADER_BYTES;
    return max <= 0 || data.length + MAX_WRITE_HEADER_BYTES + version + extra <= max;
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
    const m = await getMessage(this.#c, this.#c.stream, { last_by_subj: this.#subject(key) });
    if (m === null) return undefined;
    return {
      live: !isMarkerMessage(m.header),
      revision: checkRevision(m.seq),
      link: linkOf(m.header),
    };
  }

  #churn(op: "create" | "update" | "delete", key: string): UnavailableError {
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
      : op === "history"
      ? "read the history of memory"
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

/** A write's version headers and record (both undefined with history off). */
type Written =
  | { readonly headers: MsgHdrs; readonly record: VersionRecord }
  | { readonly headers: undefined; readonly record: undefined };

function stale(key: string): StaleError {
  return new StaleError(
    `${PREFIX} Cannot update memory ${
      quote(key)
    }: it changed or was deleted since this run read it; read it again, then update`,
    { key },
  );
}

function linkOf(h: MsgHdrs | undefined): Link | undefined {
  const { record } = readRecord(h);
  return record === undefined ? undefined : { hash: record.hash };
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
