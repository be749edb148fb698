// When a create must count the store's entries. A count is a directory scan or a server round
// trip, as costly as the write itself; far below the limit, a recent count plus the creates made
// since is as good an answer.

import { MAX_ENTRIES } from "./limits.ts";
import { checkCapacity } from "./validate.ts";

/** How old a count may be and still stand in for a new one. */
export const COUNT_MAX_AGE_MS = 1_000;
/** How far below `MAX_ENTRIES` the store must be, by the last count, to skip counting. */
export const COUNT_SLACK = 64;

/**
 * One store's capacity check. It counts exactly whenever the last count is a second old or the
 * store may be within `COUNT_SLACK` entries of the limit; in between, it adds every create it let
 * through (succeeded or not), so it errs towards counting.
 *
 * The cap is exact for one writer. Like any count-then-write, writers in other processes can
 * overshoot it: here by what they create within a second beyond the slack, since a process more
 * than 64 entries below the limit trusts a count up to a second old.
 */
export class CapacityGate {
  #count = 0;
  #countedAt = Number.NEGATIVE_INFINITY;

  /**
   * Throws `CapacityError` when a create of `key` would pass the limit.
   *
   * @param key The key being created, for the message.
   * @param count Counts the store's entries now.
   */
  async check(key: string, count: () => Promise<number>): Promise<void> {
    const fresh = Date.now() - this.#countedAt < COUNT_MAX_AGE_MS &&
      this.#count + COUNT_SLACK < MAX_ENTRIES;
    if (!fresh) {
      this.#count = await count();
      this.#countedAt = Date.now();
    }
    checkCapacity(this.#count, key);
    this.#count++;
  }
}
