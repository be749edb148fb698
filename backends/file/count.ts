// The file backend's capacity check: exact for creates that do not overlap in time, whatever the
// number of handles and processes (creates that overlap may pass the limit by their number). One
// directory pass serves every create of a handle in flight, and every later one while the store's
// create marks (creates.ts) show that no other create has linked an entry since; names put in the
// directory by hand are seen within REFRESH_MS. Why a shared count is exact:
// docs/design/file-locks.md.

import { checkCapacity } from "../../store/validate.ts";
import { MAX_ENTRIES } from "../../store/limits.ts";
import { listNames } from "./fs.ts";
import { keyOf } from "./names.ts";
import { CreateMarks, type MarksSeen } from "./creates.ts";

/** How long a count is trusted without a directory pass (for names made by something else). */
export const REFRESH_MS = 1_000;

interface Pass {
  readonly value: number;
  readonly at: number;
  readonly linkedBefore: number;
  readonly marks: MarksSeen | undefined;
  readonly time: number;
}

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
  #pass: Pass | undefined;
  #linked = 0;
  #reserved = 0;
  #inFlight = 0;
  readonly #marks: CreateMarks;

  constructor(root: string) {
    this.#root = root;
    this.#marks = new CreateMarks(root);
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
    // The marks are looked at before the directory is, so a create linked during the pass
    // (which the pass may miss) marks after that look, and the next create counts again.
    const marks = this.#marks.look();
    let fresh = this.#pass === undefined ||
      (this.#pass.at < started && !this.#stillCounts(this.#pass, marks));
    if (fresh) this.#pass = this.#passNow(marks);
    try {
      checkCapacity(this.#counted(), key);
    } catch (e) {
      // Deletes leave no mark: a full count that was kept may be one they have made wrong.
      if (fresh) throw e;
      this.#pass = this.#passNow(this.#marks.look());
      fresh = true;
      checkCapacity(this.#counted(), key);
    }
    this.#reserved++;
    let settled = false;
    const settle = (linked: boolean) => {
      if (settled) return;
      settled = true;
      this.#reserved--;
      if (!linked) return;
      this.#linked++;
      this.#marks.mark();
    };
    return { linked: () => settle(true), released: () => settle(false) };
  }

  #counted(): number {
    const { value, linkedBefore } = this.#pass!;
    return value + (this.#linked - linkedBefore) + this.#reserved;
  }

  #passNow(marks: MarksSeen | undefined): Pass {
    const value = this.#countNow();
    return { value, at: ++this.#clock, linkedBefore: this.#linked, marks, time: Date.now() };
  }

  // Whether a pass still counts every entry but this handle's own since: the same marks file,
  // grown by this handle's marks alone, and not older than REFRESH_MS.
  #stillCounts(pass: Pass, now: MarksSeen | undefined): boolean {
    const then = pass.marks;
    if (then === undefined || now === undefined || now.id !== then.id) return false;
    const age = Date.now() - pass.time;
    return now.size === then.size + (this.#linked - pass.linkedBefore) && age >= 0 &&
      age < REFRESH_MS;
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
