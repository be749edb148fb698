// A pool of worker processes (bench/worker.ts), each a separate Deno process driven over the JSON
// line protocol of bench/_protocol.ts, and the worker's side of that protocol. The driver sends
// every worker its command at once, so the workers run a phase concurrently.

import type { Command, Reply } from "./_protocol.ts";
import { spawnDeno } from "../tests/harness.ts";

const WORKER = new URL("./worker.ts", import.meta.url);
const ENCODER = new TextEncoder();
// A worker lives for one suite; past this it is killed by its pid and the run fails.
const LIMIT_MS = 30 * 60_000;

// The one spawner of the tests. All permissions: a listing reads /proc/self/io. Deno KV, one of
// the peers, is unstable.
function spawn(index: number) {
  const permissions = ["--quiet", "--allow-all", "--unstable-kv"];
  const name = `bench worker ${index}`;
  const child = spawnDeno(WORKER, [], { name, stdin: "piped", permissions, timeLimitMs: LIMIT_MS });
  const send = async (command: Command) => {
    await child.write(JSON.stringify(command) + "\n");
    const reply = await child.next(() => true) as Reply;
    if (!reply.ok) throw new Error(`${child.name} failed "${command.cmd}": ${reply.error}`);
    return reply.result;
  };
  const close = async () => {
    await send({ cmd: "exit" }).catch(() => {});
    await child.closeStdin();
    await child.status;
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
  const error = (e: unknown) => e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  let buffer = "";
  // The driver ends every command with a newline.
  for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
    const lines = (buffer + chunk).split("\n");
    buffer = lines.pop() as string;
    for (
      const command of lines.filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as Command)
    ) {
      if (command.cmd === "exit") return await end().then(() => write({ ok: true }));
      const reply = (result: unknown) => ({ ok: true as const, result });
      await write(await handle(command).then(reply, (e) => ({ ok: false, error: error(e) })));
    }
  }
  await end();
}
