// A Deno child process of the jetstream tests that prints JSON lines: started the way every test
// child starts (tests/_lib/deno_child.ts), read line by line, stopped by closing its stdin or
// killed by its own handle.

import { denoEnv, denoRunArgs } from "../_lib/deno_child.ts";

/** One JSON line a child printed. */
export type Line = { readonly t: string } & Record<string, unknown>;

/** A running child. */
export class Child implements AsyncDisposable {
  readonly #child: Deno.ChildProcess;
  readonly #lines: AsyncIterator<string>;
  readonly #stderr: Promise<string>;
  /** Every line read so far. */
  readonly seen: Line[] = [];

  constructor(script: string, job: unknown) {
    this.#child = new Deno.Command(Deno.execPath(), {
      args: [
        ...denoRunArgs(),
        "--allow-net=127.0.0.1",
        "--allow-env",
        "--allow-read",
        "--allow-sys",
        script,
        JSON.stringify(job),
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      env: denoEnv(),
    }).spawn();
    this.#lines = this.#child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(
      new TextLineStream(),
    )[Symbol.asyncIterator]();
    this.#stderr = new Response(this.#child.stderr).text();
  }

  /** Reads lines until one of type `t`; fails with the child's stderr if it ends first. */
  async next(t: string): Promise<Line> {
    for (;;) {
      const r = await this.#lines.next();
      if (r.done) throw new Error(`the child ended before printing "${t}": ${await this.#stderr}`);
      if (!r.value.startsWith("{")) continue;
      const line = JSON.parse(r.value) as Line;
      this.seen.push(line);
      if (line.t === t) return line;
    }
  }

  /** Reads every line left, until the child ends. */
  async rest(): Promise<Line[]> {
    for (;;) {
      const r = await this.#lines.next();
      if (r.done) return this.seen;
      if (r.value.startsWith("{")) this.seen.push(JSON.parse(r.value) as Line);
    }
  }

  /** Closes the child's stdin (a child that waits on it ends) and waits for its exit. */
  async stop(): Promise<Deno.CommandStatus> {
    await this.#child.stdin.close().catch(() => {});
    return await this.#child.status;
  }

  /** Sends `signal` and waits for the exit. */
  async kill(signal: Deno.Signal = "SIGKILL"): Promise<void> {
    try {
      this.#child.kill(signal);
    } catch {
      // already gone
    }
    await this.#child.status;
  }

  /** The child's stderr, once it has ended. */
  stderr(): Promise<string> {
    return this.#stderr;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.kill();
    await this.#child.stdin.close().catch(() => {});
  }
}

// Splits a text stream into lines (no std library here).
class TextLineStream extends TransformStream<string, string> {
  constructor() {
    let buffer = "";
    super({
      transform(chunk, controller) {
        buffer += chunk;
        const lines = buffer.split("\n");
        buffer = lines.pop() ?? "";
        for (const line of lines) controller.enqueue(line);
      },
      flush(controller) {
        if (buffer !== "") controller.enqueue(buffer);
      },
    });
  }
}
