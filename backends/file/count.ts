// The file backend's capacity check: exact for creates that do not overlap in time, whatever the
// number of handles and processes (creates that overlap may pass the limit by their number), and
// one directory pass serves every create of a handle in flight. Why a shared count is exact:
// docs/design/file-locks.md.

import { checkCapacity } from "../../store/validate.ts";
import { MAX_ENTRIES } from "../../store/limits.ts";
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

  // Names already found to be legal keys' files: each is validated once per handle.
  readonly #legal = new Set<string>();

  #countNow(): number {
    let n = 0;
    for (const { name, isFile } of listNames(this.#root)) {
      if (!isFile || name.charCodeAt(0) === 0x2e || !name.endsWith(".md")) continue;
      if (this.#legal.has(name)) n++;
      else if (keyOf(name) !== undefined) {
        n++;
        if (this.#legal.size < 4 * MAX_ENTRIES) this.#legal.add(name);
      }
    }
    return n;
  }
}
