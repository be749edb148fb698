// The file backend's capacity count, taken on every create and shared by the creates of one
// handle that ask for it at the same moment.
//
// Exactness: a count is a directory pass that starts after every create waiting on it was called,
// so it includes every create that finished before any of them began; creates that do not overlap
// in time therefore never pass MAX_ENTRIES, whatever the number of handles and processes. The
// creates sharing one pass are told apart by their position, count + 0, count + 1, ..., so one
// handle's own concurrent creates never overshoot either; only creates in flight in other handles
// at the same moment can, by at most their number.

import { listNames } from "./_fs.ts";
import { keyOf } from "./_file_names.ts";

/** Counts a directory's memories for the creates of one handle. */
export class SharedCount {
  readonly #root: string;
  #waiting: Array<{ resolve: (n: number) => void; reject: (e: unknown) => void }> | undefined;

  constructor(root: string) {
    this.#root = root;
  }

  /**
   * Resolves to how many memories the directory holds, counted after this call, plus how many
   * other creates of this handle were given the same count before this one.
   */
  next(): Promise<number> {
    return new Promise((resolve, reject) => {
      if (this.#waiting === undefined) {
        this.#waiting = [];
        queueMicrotask(() => this.#count());
      }
      this.#waiting.push({ resolve, reject });
    });
  }

  #count(): void {
    const waiting = this.#waiting ?? [];
    this.#waiting = undefined;
    let n = 0;
    try {
      for (const { name, isFile } of listNames(this.#root)) {
        if (isFile && keyOf(name) !== undefined) n++;
      }
    } catch (e) {
      for (const w of waiting) w.reject(e);
      return;
    }
    waiting.forEach((w, i) => w.resolve(n + i));
  }
}
