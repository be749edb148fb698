// Runs of one job shared by the calls that ask while one goes on. Each call is answered by a run
// that started after it asked: a directory flush that covers the change the call made before it
// asked (group commit), a count that sees every write acknowledged before the call began. A call
// that asks while a run goes on waits for the next one, which starts when that one ends, whether
// it succeeded or failed, and answers everyone who asked meanwhile.

/** Runs of `run`, each shared by the calls that asked before it started. */
export class NextRun<T> {
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
