// The jetstream backend's capacity check: exact without a count on every create.
//
// The argument. A bucket is one stream; every message gets the next stream sequence. Under one
// prefix, a message can add at most one live key (a put of a key that held nothing); a delete
// marker or a purge only removes. So if at most U keys were live at sequence S, then at most
// U + (N - S) are live at any later sequence N. That bound is what this file keeps:
//
// - A count gives one: the stream's last sequence S is read before the subjects are counted (the
//   server fills a stream info's state before its subject totals), and every key live at S whose
//   latest message stays in place is counted, so the keys live later are at most the count plus
//   the messages after S.
// - A write this store made at sequence N moves the bound from (U, S) to (U + N - S, N); a delete
//   marker at M, which removed a key live just before it, to (U + M - S - 2, M).
// - A create sends `Nats-Expected-Last-Sequence: S` with the bound at S. The server stores it only
//   if the stream's last sequence is still S, so the bound held at the moment of the write, and
//   U < MAX_ENTRIES made the create exact. If anything else was written since (another handle,
//   process or prefix), the server refuses and the create counts afresh instead.
// - A count taken inside a create, after the call began, reflects every create acknowledged
//   before: creates that do not overlap never pass MAX_ENTRIES, and overlapping ones overshoot by
//   at most the creates in flight (those the count could not see).
// - A count is trusted only when it finished: a scan cut short by a timeout, an abort or a failure
//   throws instead of returning what it had seen.
// - Sequences belong to one stream: when a count finds the bucket's stream was created again (a
//   new creation time), every earlier bound is dropped. A bound could only mislead a create if the
//   bucket were replaced after the last count and the new stream's last sequence happened to equal
//   the old one; a store that must rule that out is opened again after a bucket is restored.

import { MAX_ENTRIES } from "../../store/limits.ts";

/** An upper bound on the live keys under one prefix, at one stream sequence. */
export interface Bound {
  /** At most this many keys were live... */
  readonly live: number;
  /** ...when the stream's last sequence was this. */
  readonly seq: number;
  /**
   * Set when `live` is the exact count at `seq` (a count that completed with nothing written
   * meanwhile): the stream's message total then, so a later count that finds the same sequence
   * and total knows nothing changed.
   */
  readonly exact?: number | undefined;
}

/** One store's capacity bound, offered by every call that learns a stream sequence. */
export class CapacityBound {
  #bound: Bound | undefined;
  // Whether the last bound-based create found that others write to the stream too, so the next
  // create counts first rather than sending a write the server will likely refuse.
  #contended = false;

  /** The bound to send with a create, or `undefined` when the create must count first. */
  usable(): Bound | undefined {
    const b = this.#bound;
    return b !== undefined && !this.#contended && b.live < MAX_ENTRIES ? b : undefined;
  }

  /** The current bound, whatever it allows; for moving it after a write. */
  current(): Bound | undefined {
    return this.#bound;
  }

  /**
   * Keeps `b` when it is at a later sequence than the current bound (or, at the same, tighter or
   * exact where the current one is not).
   */
  offer(b: Bound): void {
    const now = this.#bound;
    if (
      now === undefined || b.seq > now.seq ||
      (b.seq === now.seq && (b.live < now.live || (b.live === now.live && now.exact === undefined)))
    ) {
      this.#bound = b;
    }
  }

  /** Moves a bound taken at `from` past this store's write at `seq` that added `added` keys. */
  wrote(from: Bound | undefined, seq: number, added: 1 | 0 | -1): void {
    if (from === undefined || seq <= from.seq) return;
    // Messages between from.seq and seq may each have added a key; ours added `added`.
    const live = from.live + (seq - 1 - from.seq) + added;
    this.offer({ live: Math.max(0, live), seq });
  }

  /** Records whether a create found other writers on the stream since its bound. */
  contended(value: boolean): void {
    this.#contended = value;
  }

  /** Forgets the bound (the bucket changed under the store). */
  reset(): void {
    this.#bound = undefined;
  }
}
