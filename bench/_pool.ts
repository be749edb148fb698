// A pool of worker processes (bench/worker.ts), each a separate Deno process driven over a JSON
// line protocol on stdin/stdout (bench/_protocol.ts), and the worker's side of that protocol. The
// driver sends every worker its command at once, so the workers run a phase concurrently.

import type { Command, Reply } from "./_protocol.ts";
import { denoEnv, denoRunArgs } from "../tests/_lib/deno_child.ts";

const WORKER = new URL("./worker.ts", import.meta.url).pathname;
const ENCODER = new TextEncoder();

/** One worker process. */
class WorkerProcess {
  readonly index: number;
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: AsyncIterator<string>;
  #stderr = "";
  readonly #stderrDone: Promise<void>;

  constructor(index: number) {
    this.index = index;
    // All: reading /proc/self/io (the bytes a listing read) needs it. Deno KV, a peer, is unstable.
    const args = [...denoRunArgs(), "--quiet", "--allow-all", "--unstable-kv", WORKER];
    const child = new Deno.Command(Deno.execPath(), {
      args,
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

  async send(command: Command): Promise<unknown> {
    await this.#writer.write(ENCODER.encode(JSON.stringify(command) + "\n"));
    const next = await this.#lines.next();
    if (next.done) {
      await this.#stderrDone.catch(() => {});
      const stderr = this.#stderr.trim() || "(no stderr)";
      throw new Error(`Worker ${this.index} exited during "${command.cmd}":\n${stderr}`);
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
    await this.send({ cmd: "exit" }).catch(() => {});
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

/** N worker processes, initialised and ready for commands; ended on dispose. */
export class WorkerPool implements AsyncDisposable {
  readonly #workers: WorkerProcess[];

  private constructor(workers: WorkerProcess[]) {
    this.#workers = workers;
  }

  /** Spawns `size` workers and sends each its `init` command. */
  static async start(size: number, init: (index: number) => Command): Promise<WorkerPool> {
    const pool = new WorkerPool(Array.from({ length: size }, (_, i) => new WorkerProcess(i)));
    try {
      await pool.each(init);
    } catch (e) {
      await pool.close();
      throw e;
    }
    return pool;
  }

  get size(): number {
    return this.#workers.length;
  }

  /** Sends each of the first `count` workers its own command at once; replies in worker order. */
  each<T>(command: (index: number) => Command, count = this.size): Promise<T[]> {
    return Promise.all(
      this.#workers.slice(0, count).map((w) => w.send(command(w.index)) as Promise<T>),
    );
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

/** The worker's side: answers every command on stdin with one reply line until "exit" or EOF. */
export async function serve(
  handle: (command: Command) => Promise<unknown>,
  end: () => Promise<void>,
): Promise<void> {
  const write = async (reply: Reply) => {
    const bytes = ENCODER.encode(JSON.stringify(reply) + "\n");
    for (let off = 0; off < bytes.length;) off += await Deno.stdout.write(bytes.subarray(off));
  };
  for await (const line of readLines(Deno.stdin.readable)) {
    const command = JSON.parse(line) as Command;
    if (command.cmd === "exit") {
      await end();
      return await write({ ok: true });
    }
    try {
      await write({ ok: true, result: await handle(command) });
    } catch (e) {
      await write({ ok: false, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
    }
  }
  await end();
}

/** Splits a byte stream into lines. */
async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
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
