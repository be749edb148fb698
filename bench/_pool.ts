// A pool of worker processes (bench/worker.ts), each a separate Deno process driven over the JSON
// line protocol of bench/_protocol.ts, and the worker's side of that protocol. The driver sends
// every worker its command at once, so the workers run a phase concurrently.

import type { Command, Reply } from "./_protocol.ts";
import { denoEnv, denoRunArgs } from "../tests/_lib/deno_child.ts";

const WORKER = new URL("./worker.ts", import.meta.url).pathname;
const ENCODER = new TextEncoder();

interface Worker {
  send(command: Command): Promise<unknown>;
  close(): Promise<void>;
}

// All permissions: a listing reads /proc/self/io. Deno KV, one of the peers, is unstable. A
// worker's stderr is the driver's, so a crash explains itself.
function spawn(index: number): Worker {
  const args = [...denoRunArgs(), "--quiet", "--allow-all", "--unstable-kv", WORKER];
  const child = new Deno.Command(Deno.execPath(), {
    args,
    env: denoEnv(),
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = readLines(child.stdout)[Symbol.asyncIterator]();
  const send = async (command: Command) => {
    await writer.write(ENCODER.encode(JSON.stringify(command) + "\n"));
    const next = await lines.next();
    if (next.done) {
      throw new Error(`Worker ${index} exited during "${command.cmd}" (its stderr is above)`);
    }
    const reply = JSON.parse(next.value) as Reply;
    if (!reply.ok) throw new Error(`Worker ${index} failed "${command.cmd}": ${reply.error}`);
    return reply.result;
  };
  const close = async () => {
    await send({ cmd: "exit" }).catch(() => {});
    await writer.close().catch(() => {});
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await child.status;
    clearTimeout(timer);
  };
  return { send, close };
}

/** N worker processes, initialised and ready for commands; ended on dispose. */
export type WorkerPool = Awaited<ReturnType<typeof startPool>>;

/** Spawns `size` workers and sends each its `init` command. */
export async function startPool(size: number, init: (index: number) => Command) {
  const workers = Array.from({ length: size }, (_, i) => spawn(i));
  const pool = {
    size,
    /** Sends each of the first `count` workers its own command at once; replies in worker order. */
    each: <T>(command: (index: number) => Command, count = size) =>
      Promise.all(workers.slice(0, count).map((w, i) => w.send(command(i)) as Promise<T>)),
    /** Sends worker `index` a command. */
    one: <T>(index: number, command: Command) => workers[index]?.send(command) as Promise<T>,
    [Symbol.asyncDispose]: () => Promise.all(workers.map((w) => w.close())).then(() => {}),
  };
  await pool.each(init).catch((e) => pool[Symbol.asyncDispose]().then(() => Promise.reject(e)));
  return pool;
}

/** The worker's side: answers every command on stdin with one reply line until "exit" or EOF. */
export async function serve(handle: (c: Command) => Promise<unknown>, end: () => Promise<void>) {
  const write = async (reply: Reply) => {
    const bytes = ENCODER.encode(JSON.stringify(reply) + "\n");
    for (let off = 0; off < bytes.length;) off += await Deno.stdout.write(bytes.subarray(off));
  };
  for await (const line of readLines(Deno.stdin.readable)) {
    const command = JSON.parse(line) as Command;
    if (command.cmd === "exit") return await end().then(() => write({ ok: true }));
    const error = (e: unknown) => e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    await write(
      await handle(command).then(
        (result) => ({ ok: true, result }),
        (e) => ({ ok: false, error: error(e) }),
      ),
    );
  }
  await end();
}

async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffer = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    const lines = (buffer + chunk).split("\n");
    buffer = lines.pop() as string;
    yield* lines.filter((line) => line.trim() !== "");
  }
  if (buffer.trim() !== "") yield buffer;
}
