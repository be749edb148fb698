// Starts tests/file/_worker.ts as separate OS processes (`deno run`) and collects the
// JSON lines they print. Every process is killed by its own handle when disposed.

import type { Job } from "./_worker.ts";
import { denoEnv, denoRunArgs } from "../_lib/deno_child.ts";

const WORKER = new URL("./_worker.ts", import.meta.url).pathname;

/** How a worker is started, besides its job and its directories. */
export interface SpawnOptions {
  /** Extra files the worker may only read. */
  readonly readOnlyPaths?: readonly string[];
  /** A command and its arguments that runs `deno` (e.g. `setpriv` dropping capabilities). */
  readonly wrapper?: readonly string[];
}

/** One JSON line a worker printed. */
export type WorkerRecord = { readonly t: string } & Record<string, unknown>;

interface Waiter {
  readonly match: (r: WorkerRecord) => boolean;
  readonly resolve: (r: WorkerRecord) => void;
  readonly reject: (e: Error) => void;
}

/** A running worker process. */
export class WorkerProcess {
  /** Every line printed so far, parsed. */
  readonly records: WorkerRecord[] = [];
  /** Resolves when the process has exited. */
  readonly status: Promise<Deno.CommandStatus>;
  readonly #child: Deno.ChildProcess;
  readonly #output: Promise<void>;
  #stderr = "";
  #ended = false;
  #exited = false;
  #waiters: Waiter[] = [];

  /**
   * @param job What the worker does.
   * @param paths The directories it may read and write (nothing else).
   * @param options `readOnlyPaths`: extra files it may only read; `wrapper`: a command (and its
   * arguments) that runs `deno`, such as `setpriv` dropping capabilities.
   */
  constructor(job: Job, paths: readonly string[], options: SpawnOptions = {}) {
    const { readOnlyPaths = [], wrapper = [] } = options;
    const [command, ...prefix] = [...wrapper, Deno.execPath()];
    this.#child = new Deno.Command(command!, {
      args: [
        ...prefix,
        ...denoRunArgs(),
        `--allow-read=${[...paths, ...readOnlyPaths].join(",")}`,
        `--allow-write=${paths.join(",")}`,
        WORKER,
        JSON.stringify(job),
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: denoEnv(),
    }).spawn();
    this.status = this.#child.status.then((s) => {
      this.#exited = true;
      return s;
    });
    this.#output = Promise.all([this.#readStdout(), this.#readStderr()]).then(() => {
      this.#ended = true;
      for (const w of this.#waiters.splice(0)) w.reject(this.#endedError());
    });
  }

  /** The process id. */
  get pid(): number {
    return this.#child.pid;
  }

  /** What the worker printed on stderr so far. */
  get stderr(): string {
    return this.#stderr;
  }

  /** The first record (already printed or still to come) that `match` accepts. */
  waitFor(match: (r: WorkerRecord) => boolean): Promise<WorkerRecord> {
    const found = this.records.find(match);
    if (found !== undefined) return Promise.resolve(found);
    if (this.#ended) return Promise.reject(this.#endedError());
    return new Promise((resolve, reject) => this.#waiters.push({ match, resolve, reject }));
  }

  /** Waits for the process to exit and its output to be read; returns its status. */
  async finished(): Promise<Deno.CommandStatus> {
    const status = await this.status;
    await this.#output;
    return status;
  }

  /** Sends SIGKILL unless the process has already exited. */
  kill(): void {
    if (this.#exited) return;
    try {
      this.#child.kill("SIGKILL");
    } catch {
      // It exited between the check and the kill.
    }
  }

  /** Kills the process if it still runs, and waits for it and its output. */
  async [Symbol.asyncDispose](): Promise<void> {
    this.kill();
    await this.finished();
  }

  #endedError(): Error {
    return new Error(`worker ${this.pid} ended its output first; stderr:\n${this.#stderr}`);
  }

  async #readStdout(): Promise<void> {
    let pending = "";
    for await (const chunk of this.#child.stdout.pipeThrough(new TextDecoderStream())) {
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf("\n")) >= 0) {
        this.#accept(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
      }
    }
    if (pending !== "") this.#accept(pending);
  }

  async #readStderr(): Promise<void> {
    for await (const chunk of this.#child.stderr.pipeThrough(new TextDecoderStream())) {
      this.#stderr += chunk;
    }
  }

  #accept(line: string): void {
    let record: WorkerRecord;
    try {
      record = JSON.parse(line) as WorkerRecord;
    } catch {
      record = { t: "raw", line };
    }
    this.records.push(record);
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.match(record)) return true;
      w.resolve(record);
      return false;
    });
  }
}

/** A set of workers disposed together. */
export class WorkerGroup {
  readonly workers: WorkerProcess[] = [];

  /** Starts a worker and adds it to the group. */
  spawn(job: Job, paths: readonly string[], options?: SpawnOptions): WorkerProcess {
    const w = new WorkerProcess(job, paths, options);
    this.workers.push(w);
    return w;
  }

  /** Waits until every worker has printed its `ready` line. */
  async ready(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.waitFor((r) => r.t === "ready")));
  }

  /** Waits for every worker to exit; fails naming the first that exited unsuccessfully. */
  async succeeded(): Promise<void> {
    for (const w of this.workers) {
      const status = await w.finished();
      if (!status.success) {
        throw new Error(`worker ${w.pid} exited with ${status.code}; stderr:\n${w.stderr}`);
      }
    }
  }

  /** Kills every worker still running and waits for all of them. */
  async [Symbol.asyncDispose](): Promise<void> {
    for (const w of this.workers) w.kill();
    await Promise.all(this.workers.map((w) => w.finished()));
  }
}
