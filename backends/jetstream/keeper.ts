// The history step with history on (step.ts): what each write chains to, the headers that make
// it its own version, and the housekeeping that follows writes in the background: moving a key's
// versions out every `MOVE_EVERY` places of its chain (a rule any handle applies alike), emptying
// a deleted key's subject `EMPTY_AFTER_MS` after its move, retention, and expiring deleted keys.

import { setTimeout } from "node:timers";
import { getMessage, readSubject } from "./messages.ts";
import {
  emptyKey,
  type HistoryTarget,
  mayPrune,
  type Moved,
  movedOf,
  moveKey,
  prune,
  type Run,
} from "./mover.ts";
import { type Link, linkOf, newRecord, readRecord, setRecord } from "./provenance.ts";
import type { Chained, HistoryStep, Landed, Listed, Over, VersionInput, Written } from "./step.ts";
import { sweep } from "./sweep.ts";
import { isMarkerMessage } from "./scan.ts";

/** A key's versions move out of its subject at every this many places of its chain. */
export const MOVE_EVERY = 16;
/**
 * How long a deleted key's subject keeps its delete marker after the marker was moved: a create
 * that read the history stream and found the subject empty within this long of each other chains
 * to what the move wrote (docs/design/history.md, "Jetstream").
 */
export const EMPTY_AFTER_MS = 500;
// How many keys a handle remembers, and how many revisions of each.
const REMEMBERED = 1024;
const RUN_LENGTH = 2 * MOVE_EVERY;
// How many moves run at once in the background.
const MOVES_IN_FLIGHT = 8;
// A handle sweeps for expired deleted keys at most this often (a sweep that stopped at its batch
// goes on at once).
const SWEEP_EVERY_MS = 10 * 60_000;
// How many batches one sweep goes through at most (the next sweep goes on from there).
const MAX_SWEEP_BATCHES = 100;

/** What a handle remembers of a key: the newest revision it saw, and what it chains to. */
interface Known {
  readonly rev: number;
  /** The version at `rev`, when it has a record; none: chain past it (`chainAfter`). */
  readonly link: Link | undefined;
  /** Whether it is a memory (not a delete). */
  readonly live: boolean;
  /** Revisions it knows to be consecutive on the key's subject, ending at `rev` (see mover.ts). */
  readonly run: Run | undefined;
}

/** The history step of one store handle. */
export class Keeper implements HistoryStep {
  readonly on = true;
  readonly emptyLinkMs = EMPTY_AFTER_MS * 0.4;
  readonly target: HistoryTarget;
  readonly #now: () => number;
  readonly #known = new Map<string, Known>();
  // What this handle last learnt the history stream holds of a key (a look, or its own move): a
  // move's guess, which the move's publish checks (moveKey).
  readonly #moved = new Map<string, Moved>();
  readonly #moving = new Map<string, Promise<void>>();
  readonly #queued = new Set<string>();
  readonly #emptying = new Map<string, Promise<void>>();
  // Delete markers a listing met, and when (this process's monotonic clock) it first did.
  readonly #markers = new Map<string, { readonly seq: number; readonly since: number }>();
  #sweptAt = Number.NEGATIVE_INFINITY;
  #sweeping: Promise<void> | undefined;

  constructor(target: HistoryTarget, o: { readonly now: () => number }) {
    this.target = target;
    this.#now = o.now;
  }

  seenLive(key: string): boolean {
    return this.#known.get(key)?.live ?? false;
  }

  async chainAfter(key: string, over: Over | undefined): Promise<Chained> {
    if (over === undefined) {
      const moved = await movedOf(this.target, key);
      this.#learnt(key, moved);
      return { after: moved.state.tip, overMarker: false };
    }
    const known = this.#known.get(key);
    if (known?.rev === over.revision && known.link !== undefined) {
      return { after: known.link, overMarker: !known.live };
    }
    let header = over.header;
    if (header === undefined) {
      const t = this.target;
      const m = await getMessage(t, { stream: t.stream, seq: over.revision });
      // Not the key's message: the write's revision check fails anyway.
      if (m === null || m.subject !== t.subjectPrefix + key) {
        return { after: undefined, overMarker: false };
      }
      header = m.header;
    }
    const overMarker = isMarkerMessage(header);
    const { record } = readRecord(header);
    if (record !== undefined) return { after: linkOf(record), overMarker };
    return { after: await this.#lastRecorded(key, over.revision), overMarker };
  }

  // A write over a message without a readable record (a raw put or delete, a forged header)
  // chains past it, to the newest version before it that has one.
  async #lastRecorded(key: string, before: number): Promise<Link | undefined> {
    const moved = await movedOf(this.target, key);
    const t = this.target;
    const messages = await readSubject(t, {
      stream: t.stream,
      subject: t.subjectPrefix + key,
      after: moved.state.to,
      until: before - 1,
    });
    for (const m of messages.reverse()) {
      const { record } = readRecord(m.header);
      if (record !== undefined) return linkOf(record);
    }
    return moved.state.tip;
  }

  version(v: VersionInput, entry: Uint8Array): Written {
    const t = this.target;
    const record = newRecord({
      name: t.namePrefix + v.key,
      op: v.op,
      call: v.call,
      after: v.after,
      now: this.#now(),
    }, entry);
    const h = t.headers();
    setRecord(h, record);
    return { headers: h, record };
  }

  wrote(key: string, w: Landed & { readonly revision: number }): void {
    const r = w.v.record;
    if (r === undefined) return;
    const run = this.#extend(key, { rev: w.revision, over: w.over });
    this.#remember(key, { rev: w.revision, link: linkOf(r), live: true, run });
    if ((r.seq ?? 0) % MOVE_EVERY === 0) this.moveSoon(key);
  }

  deleted(key: string, w: Landed & { readonly marker: number }): void {
    const r = w.v.record;
    if (r === undefined) return;
    const run = this.#extend(key, { rev: w.marker, over: w.over });
    this.#remember(key, { rev: w.marker, link: linkOf(r), live: false, run });
    this.moveSoon(key);
  }

  // The revisions known consecutive on the key's subject once a write at `w.rev` over `w.over`
  // landed (0: over nothing, so nothing but it is on the subject that is not moved already).
  #extend(key: string, w: { readonly rev: number; readonly over: number }): Run {
    const before = this.#known.get(key);
    if (before?.run !== undefined && before.rev === w.over) {
      const revs = [...before.run.revs, w.rev];
      return revs.length <= RUN_LENGTH
        ? { after: before.run.after, revs }
        : { after: revs[revs.length - RUN_LENGTH - 1]!, revs: revs.slice(-RUN_LENGTH) };
    }
    return { after: w.over, revs: [w.rev] };
  }

  saw(key: string, m: Over): void {
    if (this.#known.get(key)?.rev === m.revision) return;
    const { record } = readRecord(m.header);
    this.#remember(key, {
      rev: m.revision,
      link: record === undefined ? undefined : linkOf(record),
      live: !isMarkerMessage(m.header),
      run: undefined,
    });
  }

  /** A delete marker on a key's subject is a delete whose move or emptying was cut short. */
  listed(found: Listed): Promise<void> {
    const now = performance.now();
    for (const m of found.markers) {
      if (this.#emptying.has(m.key) || this.#moving.has(m.key)) continue;
      const seen = this.#markers.get(m.key);
      if (seen?.seq !== m.seq) {
        this.#markers.set(m.key, { seq: m.seq, since: now });
        if (this.#markers.size > REMEMBERED) {
          this.#markers.delete(this.#markers.keys().next().value as string);
        }
      } else if (now - seen.since > 2 * EMPTY_AFTER_MS) {
        this.#markers.delete(m.key);
        this.moveSoon(m.key);
      }
    }
    return Promise.resolve();
  }

  reset(): void {
    this.#known.clear();
    this.#moved.clear();
    this.#markers.clear();
  }

  /** Moves `key`'s versions in the background, one move per key at a time. */
  moveSoon(key: string): void {
    if (this.#moving.has(key) || this.#moving.size >= MOVES_IN_FLIGHT) {
      this.#queued.add(key);
      return;
    }
    const run = this.#move(key).catch(() => {
      // Housekeeping: the versions stay where they are, as readable, until the next move.
    });
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

  async #move(key: string): Promise<void> {
    const run = this.#known.get(key)?.run;
    const { moved, head } = await moveKey(this.target, { key, run, guess: this.#moved.get(key) });
    if (head === undefined) return;
    this.#learnt(key, moved);
    // The server's time of the key's newest message: retention goes by the server's clock.
    const now = Date.parse(head.at);
    if (head.marker && moved.state.to >= head.rev) this.#emptySoon(key, head.rev);
    if (mayPrune(moved.state, { retention: this.target.retention, now })) {
      const cut = await prune(this.target, { key, now });
      if (cut !== undefined) this.#learnt(key, cut);
    }
    if (head.marker) this.#sweepSoon(now);
  }

  #emptySoon(key: string, marker: number): void {
    if (this.#emptying.has(key)) return;
    const run = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        emptyKey(this.target, { key, marker, moved: true }).catch(() => {}).finally(resolve);
      }, EMPTY_AFTER_MS);
      timer.unref();
    }).finally(() => this.#emptying.delete(key));
    this.#emptying.set(key, run);
  }

  #sweepSoon(now: number): void {
    const at = performance.now();
    if (this.#sweeping !== undefined || at - this.#sweptAt < SWEEP_EVERY_MS) return;
    if (this.target.retention.days === 0) return;
    this.#sweptAt = at;
    this.#sweeping = (async () => {
      try {
        for (let batch = 0; batch < MAX_SWEEP_BATCHES && await sweep(this.target, now); batch++);
      } catch {
        // Expiry resumes at the next sweep, from the same place.
      } finally {
        this.#sweeping = undefined;
      }
    })();
  }

  #learnt(key: string, moved: Moved): void {
    this.#moved.delete(key);
    this.#moved.set(key, moved);
    if (this.#moved.size > REMEMBERED) {
      this.#moved.delete(this.#moved.keys().next().value as string);
    }
  }

  #remember(key: string, known: Known): void {
    this.#known.delete(key);
    this.#known.set(key, known);
    if (this.#known.size > REMEMBERED) {
      this.#known.delete(this.#known.keys().next().value as string);
    }
  }
}
