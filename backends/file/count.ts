// The file backend's capacity check: exact for creates that do not overlap in time, whatever the
// number of handles and processes, and cheap for many creates in flight through one handle.
//
// Why a shared count is exact. A create runs over an interval [start, end]. A directory pass
// taken at any time t inside that interval sees every entry linked before t; an entry linked by
// someone else after t but before this create links its own was made by a create that ended
// inside this create's interval, so the two overlap, and overlapping creates may pass the limit
// by their number (the documented bound). So any pass taken after a create started is as good for
// it as its own, and one pass serves every create of the handle in flight at the time: with 16 in
// flight, about one pass per 16 creates instead of one each (a pass over 1,000 entries costs
// about 0.8 ms of the event loop).
//
// This handle's own creates are kept exact as well: a pass's value is raised by the creates of the
// handle that linked since the pass and by those that passed the check and have not linked yet
// (reserved), so the handle never lets more through than the limit allows.

import { checkCapacity } from "../../store/validate.ts";
import { listNames } from "./fs.ts";
import { keyOf } from "./names.ts";

/** One create's claim on a slot; settle it exactly once. */
export interface Reservation {
  /** The entry was linked: it now counts as stored. */
  linked(): void;
  /** The create failed or was refused: the slot is free again. */
  released(): void;
}

/** The capacity check of one handle over one directory. */
export class CapacityCheck {
  readonly #root: string;
  // A logical clock ordering create starts and passes.
  #clock = 0;
  #pass: { value: number; at: number; linkedBefore: number } | undefined;
  #linked = 0;
  #reserved = 0;
  #inFlight = 0;

  constructor(root: string) {
    this.#root = root;
  }

  /** Marks a create's start; returns its stamp. Call `end()` when it settles. */
  begin(): number {
    this.#inFlight++;
    return ++this.#clock;
  }

  /** Marks a create's end. */
  end(): void {
    this.#inFlight--;
  }

  /** `true` when other creates of this handle are in flight (a later check may share a pass). */
  get crowded(): boolean {
    return this.#inFlight > 1;
  }

  /**
   * Reserves a slot for a create that started at `started`, or throws `CapacityError`.
   *
   * @throws {CapacityError} when the directory, with this handle's creates in flight, is full.
   */
  reserve(started: number, key: string): Reservation {
    if (this.#pass === undefined || this.#pass.at < started) {
      this.#pass = { value: this.#countNow(), at: ++this.#clock, linkedBefore: this.#linked };
    }
    const { value, linkedBefore } = this.#pass;
    checkCapacity(value + (this.#linked - linkedBefore) + this.#reserved, key);
    this.#reserved++;
    let settled = false;
    const settle = (linked: boolean) => {
      if (settled) return;
      settled = true;
      this.#reserved--;
      if (linked) this.#linked++;
    };
    return { linked: () => settle(true), released: () => settle(false) };
  }

  #countNow(): number {
    let n = 0;
    for (const { name, isFile } of listNames(this.#root)) {
      if (isFile && keyOf(name) !== undefined) n++;
    }
    return n;
  }
}
