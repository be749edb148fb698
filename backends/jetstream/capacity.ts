// The jetstream backend's capacity check: exact without a count on every create. A bound on the
// live keys under one prefix at one stream sequence grows by one per message after it; a create
// that expects the stream's last sequence to be the bound's is exact, and one that finds others
// wrote since counts afresh (docs/design/jetstream.md, "Capacity", gives the argument).

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
  wrote(from: Bound | undefined, w: { readonly seq: number; readonly added: 1 | 0 | -1 }): void {
    const { seq, added } = w;
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
