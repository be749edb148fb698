// Starts tests/jetstream/_worker.ts as separate OS processes and reads the JSON lines they
// print. Each process is killed by its own handle when the group is disposed.

import type { Job } from "./_worker.ts";
import { denoEnv, denoRunArgs } from "../_lib/deno_child.ts";

const WORKER = new URL("./_worker.ts", import.meta.url).pathname;

/** One JSON line a worker printed. */
export type WorkerRecord = { readonly t: string } & { readonly [field: string]: unknown };

/** A running worker: its records, in order, as they arrive. */
export class Worker {
  readonly #child: Deno.ChildProcess;
  readonly #lines: AsyncIterator<string>;
  readonly #stderr: Promise<string>;

  constructor(job: Job) {
    this.#child = new Deno.Command(Deno.execPath(), {
      args: [
        ...denoRunArgs(),
        "--allow-net=127.0.0.1",
        "--allow-env",
        "--allow-sys",
        "--allow-read",
        WORKER,
        JSON.stringify(job),
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: denoEnv(),
    }).spawn();
    this.#lines = lines(this.#child.stdout)[Symbol.asyncIterator]();
    this.#stderr = new Response(this.#child.stderr).text();
  }

  /** The next record; fails with the worker's stderr if it ends its output first. */
  async next(type: string): Promise<WorkerRecord> {
    for (;;) {
      const line = await this.#lines.next();
      if (line.done) {
        const status = await this.#child.status;
        throw new Error(
          `worker ${this.#child.pid} exited (${status.code}) before "${type}":\n${await this
            .#stderr}`,
        );
      }
      if (!line.value.startsWith("{")) continue;
      const record = JSON.parse(line.value) as WorkerRecord;
      if (record.t === type) return record;
    }
  }

  /** Waits for a clean exit. */
  async finished(): Promise<void> {
    const status = await this.#child.status;
    if (!status.success) {
      throw new Error(`worker exited with ${status.code}:\n${await this.#stderr}`);
    }
  }

  /** Kills the worker if it still runs. */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      this.#child.kill("SIGKILL");
    } catch {
      // already exited
    }
    await this.#child.status;
    await this.#stderr.catch(() => "");
  }
}

async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let pending = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    pending += chunk;
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      yield pending.slice(0, nl);
      pending = pending.slice(nl + 1);
    }
  }
  if (pending) yield pending;
}
