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
 * One store's capacity check. It counts exactly whenever the last count is older than a second
 * or the store may be within `COUNT_SLACK` entries of the limit. Between counts it adds every
 * create it let through (succeeded or not), so it errs towards counting.
 *
 * Like any count-then-write, the cap is exact for one writer; writers in other processes can
 * overshoot it by the creates they make in the same moment.
 */
export class CapacityGate {
  #count = 0;
  #countedAt = Number.NEGATIVE_INFINITY;
  #stamp: unknown;

  /**
   * Throws `CapacityError` when a create of `key` would pass the limit.
   *
   * @param key The key being created, for the message.
   * @param count Counts the store's entries now.
   * @param stamp When the backend has one, a cheap token that changes whenever the store gains
   * or loses an entry (a directory's mtime); a changed token forces a count.
   */
  async check(key: string, count: () => Promise<number>, stamp?: () => unknown): Promise<void> {
    const now = stamp?.();
    const fresh = Date.now() - this.#countedAt < COUNT_MAX_AGE_MS &&
      this.#count + COUNT_SLACK < MAX_ENTRIES && now === this.#stamp;
    if (!fresh) {
      this.#count = await count();
      this.#countedAt = Date.now();
      this.#stamp = now;
    }
    checkCapacity(this.#count, key);
    this.#count++;
  }

  /**
   * Records the store's token after this process's own create, so its own change forces no count.
   *
   * @param stamp The backend's token, read after the write.
   */
  wrote(stamp: unknown): void {
    this.#stamp = stamp;
  }
}
