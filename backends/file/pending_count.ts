// The number of pending proposals in a file store's `.review`, kept between held writes so that a
// held write does not list a directory whose decided records grow for as long as the retention
// keeps them. Every proposal added marks `.review/.creates` (creates.ts) once it is linked; a kept
// count stands while the marks grew only by this handle's own, and a count that reaches the limit
// is taken again before it refuses (decisions leave no mark, so a kept count can only be high).
// Adds that overlap in time may pass the limit by their number, as overlapping creates pass
// MAX_ENTRIES.

import { CreateMarks, type MarksSeen } from "./creates.ts";

interface Kept {
  readonly value: number;
  readonly marks: MarksSeen;
}

/** A handle's count of the pending proposals in one review directory. */
export class PendingCount {
  readonly #marks: CreateMarks;
  #kept: Kept | undefined;
  #seen: MarksSeen | undefined;

  constructor(dir: string) {
    this.#marks = new CreateMarks(dir);
  }

  /**
   * How many proposals are pending: the kept count while it stands and is under `limit`, else
   * `list()`, which counts them in the directory.
   */
  count(limit: number, list: () => number): number {
    const seen = this.#marks.look();
    this.#seen = seen;
    const k = this.#kept;
    if (k !== undefined && same(seen, k.marks) && k.value < limit) return k.value;
    const value = list();
    this.#kept = seen === undefined ? undefined : { value, marks: seen };
    return value;
  }

  /** Keeps no count: the next `count` lists the directory. */
  forget(): void {
    this.#kept = undefined;
  }

  /**
   * One proposal was added (linked) after the last `count`: marks it, and keeps the count one
   * higher when the marks are then exactly one past what that count saw.
   */
  added(): void {
    this.#marks.mark();
    const [k, seen] = [this.#kept, this.#seen];
    this.#kept = undefined;
    if (k === undefined || seen === undefined || !same(seen, k.marks)) return;
    const now = this.#marks.look();
    if (now !== undefined && same(now, { id: seen.id, size: seen.size + 1 })) {
      this.#kept = { value: k.value + 1, marks: now };
    }
  }
}

function same(a: MarksSeen | undefined, b: MarksSeen): boolean {
  return a !== undefined && a.id === b.id && a.size === b.size;
}
