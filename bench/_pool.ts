// A pool of worker processes (bench/worker.ts), each a separate Deno process driven over a JSON
// line protocol on stdin/stdout. The driver sends every worker its command at once, so the
// workers run a phase concurrently.

import type { Command, InitCommand, Reply } from "./_protocol.ts";
import { denoEnv, denoRunArgs } from "../tests/_lib/deno_child.ts";

const WORKER = new URL("./worker.ts", import.meta.url);
const ENCODER = new TextEncoder();

/** One worker process: bench/worker.ts, or another script speaking the same line protocol. */
export class WorkerProcess {
  readonly index: number;
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: AsyncIterator<string>;
  #stderr = "";
  readonly #stderrDone: Promise<void>;

  constructor(index: number, script: URL = WORKER, args: readonly string[] = []) {
    this.index = index;
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        ...denoRunArgs(),
        "--quiet",
        // All: reading /proc/self/io (the bytes a listing read) needs it.
        "--allow-all",
        // Deno KV, a peer in bench/peers.ts, is an unstable API.
        "--unstable-kv",
        script.pathname,
        ...args,
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      env: denoEnv(),
    }).spawn();
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#lines = readLines(child.stdout)[Symbol.asyncIterator]();
    this.#stderrDone = (async () => {
      for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
        // Keep the tail only: enough to explain a crash.
        this.#stderr = (this.#stderr + chunk).slice(-8000);
      }
    })();
  }

  async send(command: Command | { readonly cmd: string }): Promise<unknown> {
    await this.#writer.write(ENCODER.encode(JSON.stringify(command) + "\n"));
    const next = await this.#lines.next();
    if (next.done) {
      await this.#stderrDone.catch(() => {});
      throw new Error(
        `Worker ${this.index} exited during "${command.cmd}":\n${
          this.#stderr.trim() || "(no stderr)"
        }`,
      );
    }
    let reply: Reply;
    try {
      reply = JSON.parse(next.value) as Reply;
    } catch {
      throw new Error(`Worker ${this.index} wrote a line that is not JSON: ${next.value}`);
    }
    if (!reply.ok) throw new Error(`Worker ${this.index} failed "${command.cmd}": ${reply.error}`);
    return reply.result;
  }

  async close(): Promise<void> {
    try {
      await this.send({ cmd: "exit" });
    } catch {
      // already gone
    }
    await this.#writer.close().catch(() => {});
    const timer = setTimeout(() => {
      try {
        this.#child.kill("SIGKILL");
      } catch {
        // gone
      }
    }, 5_000);
    await this.#child.status;
    clearTimeout(timer);
    await this.#stderrDone.catch(() => {});
  }
}

/** N worker processes, initialised and ready for commands. */
export class WorkerPool implements AsyncDisposable {
  readonly #workers: WorkerProcess[];

  private constructor(workers: WorkerProcess[]) {
    this.#workers = workers;
  }

  /** Spawns `size` workers and sends each its `init` command. */
  static async start(size: number, init: (index: number) => InitCommand): Promise<WorkerPool> {
    const workers = Array.from({ length: size }, (_, i) => new WorkerProcess(i));
    const pool = new WorkerPool(workers);
    try {
      await Promise.all(workers.map((w) => w.send(init(w.index))));
    } catch (e) {
      await pool.close();
      throw e;
    }
    return pool;
  }

  get size(): number {
    return this.#workers.length;
  }

  /** Sends each worker its own command at once and waits for every reply, in worker order. */
  each<T>(command: (index: number) => Command): Promise<T[]> {
    return Promise.all(this.#workers.map((w) => w.send(command(w.index)) as Promise<T>));
  }

  /** Sends one worker a command. */
  one<T>(index: number, command: Command): Promise<T> {
    const worker = this.#workers[index];
    if (worker === undefined) throw new RangeError(`No worker ${index}`);
    return worker.send(command) as Promise<T>;
  }

  /** Ends every worker. */
  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.close()));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** Splits a byte stream into lines. */
export async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffer = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim() !== "") yield line;
    }
  }
  if (buffer.trim() !== "") yield buffer;
}
