// Group commit for directory fsyncs. A write is durable once the directory entry it linked,
// renamed or removed is flushed; writes that finish while a flush is running share the next one,
// so 16 writers in flight pay for a few flushes, not 16. A flush covers a write only if it
// started after that write's change to the directory: a write that arrives while a flush is
// running waits for the one after it, and no write is acknowledged before a flush that covers it
// (store/next_run.ts).

import { NextRun } from "../../store/next_run.ts";
import { syncDir } from "./fs.ts";

/** Shares directory fsyncs between concurrent writers of one directory. */
export class DirSync {
  readonly #flushes: NextRun<void>;

  /** `dir`: the directory's path, or the function that flushes it. */
  constructor(dir: string | (() => Promise<void>)) {
    this.#flushes = new NextRun(typeof dir === "string" ? () => syncDir(dir) : dir);
  }

  /** Resolves once a flush that started after this call has completed. */
  flush(): Promise<void> {
    return this.#flushes.next();
  }
}
