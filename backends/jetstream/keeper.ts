// The write side of a jetstream store's history: what each write chains to, the headers that make
// the write its own version, and the moves that take old versions out of the listed subjects
// (mover.ts). One per store handle.
//
// A handle remembers, per key, the versions it wrote and read that it knows to be consecutive on
// the key's subject (a write expected the revision before it), so a move packs them as they are:
// a pack and a purge, no reads. A key others wrote to meanwhile is read from the stream.

import type { MsgHdrs } from "@nats-io/nats-core";
import type { Call } from "../../store/backend.ts";
import { Deadline } from "./errors.ts";
import { getMessage, type HistoryTarget, type Moved, movedOf, moveKey, prune } from "./mover.ts";
import type { Packed } from "./pack.ts";
import { type Link, newRecord, readRecord, setRecord, type VersionRecord } from "./provenance.ts";
import { isMarkerMessage } from "./scan.ts";

/**
 * A live key's versions are moved out once this many have gathered on its subject: a move (one
 * pack, one purge) shared by this many updates costs an update about 1.15x (8: 1.3x), and a
 * listing of keys with up to this many versions each costs about what one of keys written once
 * does (0.8-1.1x, nats-server 2.9.10 and 2.10.27, 1,000 keys).
 */
export const MOVE_EVERY = 16;
// A key's history is pruned once every this many of its moves.
const PRUNE_EVERY = 16;
// How many keys a handle remembers.
const REMEMBERED = 1024;
// How many moves run at once in the background.
const MOVES_IN_FLIGHT = 4;
const EMPTY = new Uint8Array(0);

/** What a handle remembers of a key. */
interface Known {
  /** The newest revision it saw (read or wrote), and that version's hash when it has a record. */
  readonly rev: number;
  readonly link: Link | undefined;
  /** Whether that revision is a delete marker. */
  readonly marker: boolean;
  /** Versions it holds, consecutive on the key's subject, ending at `rev`. */
  readonly chain: Packed[];
  /** The revision just before `chain`'s first, when known. */
  readonly after: number | undefined;
  /** Moves of the key this handle made. */
  readonly moves: number;
}

/** The history side of one store handle's writes. */
export class Keeper {
  readonly target: HistoryTarget;
  readonly #known = new Map<string, Known>();
  readonly #moved = new Map<string, Moved>();
  readonly #moving = new Map<string, Promise<void>>();
  readonly #queued = new Set<string>();

  constructor(target: HistoryTarget) {
    this.target = target;
  }

  /** Remembers a version a read (or a look) saw: its revision, headers and value. */
  saw(key: string, rev: number, header: MsgHdrs | undefined, data?: Uint8Array): void {
    const known = this.#known.get(key);
    if (known?.rev === rev) return;
    const { record } = readRecord(header);
    const marker = isMarkerMessage(header);
    const chain = record === undefined || data === undefined ? [] : [
      { rev, at: record.at, record, entry: marker ? EMPTY : data },
    ];
    this.#remember(key, {
      rev,
      link: record === undefined ? undefined : { hash: record.hash },
      marker,
      chain,
      after: undefined,
      moves: known?.moves ?? 0,
    });
  }

  /** Forgets what it knew of every key (the bucket was replaced). */
  reset(): void {
    this.#known.clear();
    this.#moved.clear();
  }

  /**
   * What a write over revision `rev` of `key` chains to (remembered, or read from the message),
   * and whether that revision is a delete marker (the write then brings the key back).
   * `undefined` when that message is not the key's (the write fails its revision check anyway).
   */
  async linkAt(
    key: string,
    rev: number,
  ): Promise<{ link: Link | undefined; marker: boolean } | undefined> {
    const known = this.#known.get(key);
    if (known?.rev === rev) return { link: known.link, marker: known.marker };
    const m = await getMessage(this.target, this.target.stream, { seq: rev });
    if (m === null || m.subject !== this.target.subjectPrefix + key) return undefined;
    this.saw(key, rev, m.header, m.data);
    return { link: this.#known.get(key)?.link, marker: isMarkerMessage(m.header) };
  }

  /**
   * What a create of a key that holds nothing on its subject chains to: the newest version its
   * history stream holds (a deleted key's delete), or nothing for a key never written.
   */
  async linkForCreate(key: string): Promise<Link | undefined> {
    const moved = await movedOf(this.target, key);
    this.#moved.set(key, moved);
    return moved.last;
  }

  /** The headers (and record) that make a write of `entry` a version chained to `link`. */
  version(
    key: string,
    op: VersionRecord["op"],
    call: Call,
    link: Link | undefined,
    entry: Uint8Array,
  ): { headers: MsgHdrs; record: VersionRecord } {
    const record = newRecord(key, op, call, link, entry);
    const h = this.target.headers();
    setRecord(h, record);
    return { headers: h, record };
  }

  /**
   * After a create or an update of `key` landed at `rev`, over `expected` (the revision it
   * expected, 0 for nothing): remembers it, and once enough versions gathered on the key's subject
   * (or it came back over a delete marker), moves them out in the background.
   */
  wrote(
    key: string,
    rev: number,
    expected: number,
    record: VersionRecord,
    entry: Uint8Array,
    overMarker: boolean,
  ): void {
    const known = this.#extend(key, rev, expected, record, entry);
    if (overMarker || known.chain.length >= MOVE_EVERY) this.moveSoon(key);
  }

  /**
   * After a delete of `key` landed at `marker` over `expected`: moves the key's versions out, the
   * marker included, so the key's subject is empty again. The delete is done whatever this does;
   * a move that fails is finished by the next listing that meets the marker.
   */
  async deleted(
    key: string,
    marker: number,
    expected: number,
    record: VersionRecord,
    d: Deadline,
  ): Promise<void> {
    this.#extend(key, marker, expected, record, EMPTY);
    await this.#move(key, d).catch(() => {});
  }

  /** Moves `key`'s versions in the background, one move per key at a time. */
  moveSoon(key: string): void {
    if (this.#moving.has(key) || this.#moving.size >= MOVES_IN_FLIGHT) {
      this.#queued.add(key);
      return;
    }
    const run = (async () => {
      const d = new Deadline(this.target.timeout);
      try {
        await this.#move(key, d);
      } catch {
        // Housekeeping: the versions stay where they are, as readable, until the next move.
      } finally {
        d.cancel();
      }
    })();
    this.#moving.set(key, run);
    run.finally(() => {
      this.#moving.delete(key);
      const next = this.#queued.values().next();
      if (!next.done) {
        this.#queued.delete(next.value);
        this.moveSoon(next.value);
      }
    });
  }

  /** Waits until no move runs in the background (for tests and the benchmark). */
  async settled(): Promise<void> {
    while (this.#moving.size > 0 || this.#queued.size > 0) {
      await Promise.all(this.#moving.values());
      if (this.#moving.size === 0 && this.#queued.size > 0) {
        const next = this.#queued.values().next().value as string;
        this.#queued.delete(next);
        this.moveSoon(next);
      }
    }
  }

  // Adds a version this handle wrote over `expected` to what it knows of the key.
  #extend(
    key: string,
    rev: number,
    expected: number,
    record: VersionRecord,
    entry: Uint8Array,
  ): Known {
    const before = this.#known.get(key);
    const version: Packed = { rev, at: record.at, record, entry };
    const follows = before !== undefined && before.rev === expected;
    const known: Known = {
      rev,
      link: { hash: record.hash },
      marker: record.op === "delete",
      chain: follows ? [...before.chain, version] : [version],
      after: follows ? before.after : expected,
      moves: before?.moves ?? 0,
    };
    this.#remember(key, known);
    return known;
  }

  async #move(key: string, d: Deadline): Promise<void> {
    const known = this.#known.get(key);
    const chain = known === undefined ? undefined : { after: known.after, versions: known.chain };
    const moved = await moveKey(this.target, key, d, {
      moved: this.#moved.get(key),
      chain,
    });
    this.#moved.set(key, moved);
    const now = this.#known.get(key);
    if (now === undefined) return;
    // What was moved is no longer held; what was written meanwhile stays.
    const rest = now.chain.filter((v) => v.rev > moved.to);
    const moves = now.moves + 1;
    this.#remember(key, {
      ...now,
      chain: rest,
      after: rest.length === now.chain.length ? now.after : moved.to,
      moves,
    });
    // A deleted key is pruned as it goes when it had versions moved before (it may have more
    // than the retention keeps); otherwise every PRUNE_EVERY moves.
    if (moves % PRUNE_EVERY === 0 || (now.marker && moves > 1)) await prune(this.target, key, d);
  }

  #remember(key: string, known: Known): void {
    this.#known.delete(key);
    this.#known.set(key, known);
    if (this.#known.size > REMEMBERED) {
      const oldest = this.#known.keys().next().value as string;
      this.#known.delete(oldest);
      this.#moved.delete(oldest);
    }
  }
}
