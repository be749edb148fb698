// Counts shared by the calls that ask while one runs. A create needs a count that started after
// the call began (such a count reflects every create acknowledged before it: docs/design/
// jetstream.md, "Capacity"), so a call that asks while a count runs waits for the next one, which
// starts when the running one ends and answers everyone who asked meanwhile. Sixteen creates in
// flight through one handle then make a few counts, not sixteen, each as good as their own.

/** Runs of `run`, each shared by the calls that asked before it started. */
export class SharedCount<T> {
  readonly #run: () => Promise<T>;
  // The run going on now, if any.
  #running: Promise<T> | undefined;
  // The run that starts when the running one ends, shared by everyone who asks meanwhile.
  #next: Promise<T> | undefined;

  constructor(run: () => Promise<T>) {
    this.#run = run;
  }

  /** Resolves with (or rejects as) a run that started after this call. */
  next(): Promise<T> {
    if (this.#running === undefined) return this.#start();
    // Whether the running one succeeds or fails, the next one runs: it is the one that serves
    // the calls waiting on it.
    this.#next ??= this.#running.then(() => this.#start(), () => this.#start());
    return this.#next;
  }

  #start(): Promise<T> {
    this.#next = undefined;
    const run = this.#run().finally(() => {
      if (this.#running === run) this.#running = undefined;
    });
    this.#running = run;
    return run;
  }
}
