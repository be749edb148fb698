// Group commit for directory fsyncs. A write is durable once the directory entry it linked,
// renamed or removed is flushed; writes that finish while a flush is running share the next one,
// so 16 writers in flight pay for a few flushes, not 16. A flush covers a write only if it
// started after that write's change to the directory: a write that arrives while a flush is
// running waits for the one after it, and no write is acknowledged before a flush that covers it.

import { syncDir } from "./fs.ts";

/** Shares directory fsyncs between concurrent writers of one directory. */
export class DirSync {
  readonly #sync: () => Promise<void>;
  // The flush running now, if any.
  #running: Promise<void> | undefined;
  // The flush that will start when the running one ends, shared by everyone who asks meanwhile.
  #next: Promise<void> | undefined;

  /** `dir`: the directory's path, or the function that flushes it. */
  constructor(dir: string | (() => Promise<void>)) {
    this.#sync = typeof dir === "string" ? () => syncDir(dir) : dir;
  }

  /** Resolves once a flush that started after this call has completed. */
  flush(): Promise<void> {
    if (this.#running === undefined) return this.#start();
    if (this.#next === undefined) {
      // Whether the running flush succeeds or fails, the next one runs: it is the one that
      // covers the writes waiting on it.
      this.#next = this.#running.then(() => this.#start(), () => this.#start());
    }
    return this.#next;
  }

  #start(): Promise<void> {
    this.#next = undefined;
    const run = this.#sync().finally(() => {
      if (this.#running === run) this.#running = undefined;
    });
    this.#running = run;
    return run;
  }
}
