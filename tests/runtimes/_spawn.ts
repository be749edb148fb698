// Child processes that print JSON lines, for tests/runtimes/runtimes_test.ts. Deno-side helper.

/** One JSON line a child printed. */
export type Line = { readonly t?: string } & Record<string, unknown>;

/** A running child whose stdout lines are parsed as they arrive. */
export class LineProcess {
  readonly lines: Line[] = [];
  readonly done: Promise<{ code: number; stderr: string; stdout: string }>;
  readonly #child: Deno.ChildProcess;
  #waiters: { match: (l: Line) => boolean; resolve: (l: Line) => void }[] = [];

  constructor(
    cmd: string,
    args: readonly string[],
    options: { cwd?: string; env?: Record<string, string>; stdin?: boolean } = {},
  ) {
    this.#child = new Deno.Command(cmd, {
      args: [...args],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      env: { NO_COLOR: "1", ...options.env },
      stdin: options.stdin ? "piped" : "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(this.#child.stderr).text();
    const stdout = this.#read();
    this.done = Promise.all([this.#child.status, stdout, stderr]).then(([s, out, err]) => {
      for (const w of this.#waiters.splice(0)) w.resolve({ t: "exited" });
      return { code: s.code, stdout: out, stderr: err };
    });
  }

  /** Resolves with the first line matching, or `{ t: "exited" }` if the child ends first. */
  waitFor(match: (l: Line) => boolean): Promise<Line> {
    const seen = this.lines.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  /** Writes `text` to the child's stdin and closes it. */
  async send(text: string): Promise<void> {
    const writer = this.#child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(text));
    await writer.close();
  }

  /** Kills the child if it still runs. */
  kill(): void {
    try {
      this.#child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }

  async #read(): Promise<string> {
    let all = "";
    let buffer = "";
    for await (const chunk of this.#child.stdout.pipeThrough(new TextDecoderStream())) {
      all += chunk;
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const text = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        let line: Line;
        try {
          line = JSON.parse(text);
        } catch {
          continue; // not ours (a runtime's own message)
        }
        this.lines.push(line);
        this.#waiters = this.#waiters.filter((w) => {
          if (!w.match(line)) return true;
          w.resolve(line);
          return false;
        });
      }
    }
    return all;
  }
}
