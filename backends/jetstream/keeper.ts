// The write side of a jetstream store's history: what each write chains to, the headers that make
// the write its own version, and the moves that take old versions out of the listed subjects
// (mover.ts). One per store handle.

import { headers, type MsgHdrs } from "@nats-io/nats-core";
import type { Call } from "../../store/_store.ts";
import { Deadline } from "./errors.ts";
import {
  getMessage,
  type HistoryTarget,
  type Moved,
  movedOf,
  moveKey,
  prune,
  type StoredMsgLike,
} from "./mover.ts";
import { type Link, newRecord, readRecord, setRecord, type VersionRecord } from "./provenance.ts";
import { isMarkerMessage } from "./scan.ts";

/**
 * A live key's versions are moved out once this many have gathered on its subject, so a listing
 * meets at most this many messages per key (all of them cost it on nats-server 2.10), while a
 * move (a few reads, one pack, one purge) is shared by this many updates.
 */
export const MOVE_EVERY = 4;
// A key's history is pruned once every this many moves.
const PRUNE_EVERY = 8;
// How many keys' links and move states a handle remembers.
const REMEMBERED = 4096;
// How many moves run at once in the background.
const MOVES_IN_FLIGHT = 4;

/** What a handle remembers of a key it wrote or read. */
interface Known {
  /** The revision it saw last, and the hash of that version (`undefined`: no record). */
  readonly rev: number;
  readonly link: Link | undefined;
  /** Whether that revision is a delete marker. */
  readonly marker: boolean;
  /** Versions written on the key's subject since the last move this handle knows of. */
  readonly unmoved: number;
}

/** The history side of one store handle's writes. */
export class Keeper {
  readonly target: HistoryTarget;
  readonly #known = new Map<string, Known>();
  readonly #moved = new Map<string, Moved>();
  readonly #moving = new Map<string, Promise<void>>();
  readonly #queued = new Set<string>();
  #moves = 0;

  constructor(target: HistoryTarget) {
    this.target = target;
  }

  /** Remembers what a read or a write saw of `key`: the revision and its record. */
  saw(key: string, rev: number, header: MsgHdrs | undefined, unmoved?: number): void {
    const { record } = readRecord(header);
    this.#remember(key, {
      rev,
      link: record === undefined ? undefined : { hash: record.hash },
      marker: isMarkerMessage(header),
      unmoved: unmoved ?? this.#known.get(key)?.unmoved ?? 1,
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
    this.saw(key, rev, m.header);
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
    const h = headers();
    setRecord(h, record);
    return { headers: h, record };
  }

  /**
   * After a create or an update of `key` landed at `rev`: remembers it, and once enough
   * versions gathered on the key's subject (or it came back over a delete marker), moves them out
   * in the background.
   */
  wrote(key: string, rev: number, record: VersionRecord, overMarker: boolean): void {
    const before = this.#known.get(key);
    const unmoved = record.op === "create" ? 1 : (before?.unmoved ?? 1) + 1;
    this.#remember(key, { rev, link: { hash: record.hash }, marker: false, unmoved });
    if (overMarker || unmoved >= MOVE_EVERY) this.moveSoon(key);
  }

  /**
   * After a delete of `key` landed at `marker`: moves the key's versions out, the marker
   * included, so the key's subject is empty again. The delete is done whatever this does; a
   * move that fails is finished by the next listing that meets the marker.
   */
  async deleted(key: string, marker: number, record: VersionRecord, d: Deadline): Promise<void> {
    this.#remember(key, { rev: marker, link: { hash: record.hash }, marker: true, unmoved: 0 });
    const h = headers();
    setRecord(h, record);
    h.set("KV-Operation", "DEL");
    await this.#move(key, d, { seq: marker, header: h }).catch(() => {});
  }

  /** Moves `key`'s versions in the background, one move per key at a time. */
  moveSoon(key: string): void {
    if (this.#moving.has(key)) {
      this.#queued.add(key);
      return;
    }
    if (this.#moving.size >= MOVES_IN_FLIGHT) {
      this.#queued.add(key);
      return;
    }
    const run = (async () => {
      const d = new Deadline(this.target.timeout);
      try {
        await this.#move(key, d, undefined);
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

  async #move(key: string, d: Deadline, head: StoredMsgLike | undefined): Promise<void> {
    const moved = await moveKey(this.target, key, d, { head, moved: this.#moved.get(key) });
    this.#moved.set(key, moved);
    const known = this.#known.get(key);
    if (known !== undefined) this.#remember(key, { ...known, unmoved: 1 });
    if (++this.#moves % PRUNE_EVERY === 0 || (head !== undefined && isMarkerMessage(head.header))) {
      await prune(this.target, key, d);
    }
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
