// Runs tests/file/_rbu_worker.ts as a separate OS process and reads its JSON lines.

import type { RbuJob } from "./_rbu_worker.ts";
import { denoEnv, denoRunArgs } from "../_lib/deno_child.ts";

const WORKER = new URL("./_rbu_worker.ts", import.meta.url).pathname;

/** One line a worker printed. */
export type RbuRecord = { readonly t: string } & Record<string, unknown>;

/** A running worker; `await using` kills it if it is still running. */
export class RbuWorker implements AsyncDisposable {
  readonly records: RbuRecord[] = [];
  readonly #child: Deno.ChildProcess;
  readonly #done: Promise<void>;
  #stderr = "";
  #wake: () => void = () => {};

  /** Starts a worker with the given Deno permission flags (all by default). */
  constructor(job: RbuJob, permissions: readonly string[] = ["--allow-all"]) {
    this.#child = new Deno.Command(Deno.execPath(), {
      args: [
        ...denoRunArgs(),
        ...permissions,
        WORKER,
        JSON.stringify(job),
      ],
      stdout: "piped",
      stderr: "piped",
      env: denoEnv(),
    }).spawn();
    const out = this.#child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const err = this.#child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    const pump = async () => {
      let buffer = "";
      for (let r = await out.read(); !r.done; r = await out.read()) {
        buffer += r.value;
        for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
          this.records.push(JSON.parse(buffer.slice(0, i)));
          buffer = buffer.slice(i + 1);
          this.#wake();
        }
      }
    };
    const drain = async () => {
      for (let r = await err.read(); !r.done; r = await err.read()) this.#stderr += r.value;
    };
    this.#done = Promise.all([pump(), drain()]).then(() => this.#wake());
  }

  get pid(): number {
    return this.#child.pid;
  }

  /** Waits for a record of type `t`; fails if the process ends without printing one. */
  async waitFor(t: string): Promise<RbuRecord> {
    let ended = false;
    this.#done.then(() => (ended = true));
    for (;;) {
      const found = this.records.find((r) => r.t === t);
      if (found !== undefined) return found;
      if (ended) throw new Error(`worker ended without "${t}": ${this.#stderr}`);
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, 50);
      });
    }
  }

  /** Waits for the process to exit; fails on a non-zero exit. */
  async finished(): Promise<void> {
    const status = await this.#child.status;
    await this.#done;
    if (!status.success) throw new Error(`worker failed (${status.code}): ${this.#stderr}`);
  }

  kill(signal: Deno.Signal = "SIGKILL"): void {
    try {
      this.#child.kill(signal);
    } catch {
      // already gone
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.kill();
    await this.#child.status;
    await this.#done;
  }
}
