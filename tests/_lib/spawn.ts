// The one way the tests start a child process that prints JSON lines: a Deno worker, a Node or
// Bun process, the nemesis run and its clients. The child has a time limit; past it, it is killed
// by its pid (SIGKILL) and every wait on it fails naming the child and the tail of its stderr.
// `await using` kills it if it still runs and waits for its output.

import { denoEnv, denoRunArgs } from "./deno_child.ts";

/** One JSON line a child printed (non-JSON lines are `{ t: "raw", line }` with `rawLines`). */
export type ChildRecord = { readonly t?: string } & Record<string, unknown>;

/** What picks a record: its `t`, or a predicate. */
export type RecordMatch = string | ((r: ChildRecord) => boolean);

/** How a child ended, with all it printed. */
export interface ChildOutput {
  readonly code: number;
  readonly signal: Deno.Signal | null;
  readonly success: boolean;
  readonly stdout: string;
  readonly stderr: string;
  /** The exact bytes of stdout. */
  readonly stdoutBytes: Uint8Array;
}

/** How a child is started. */
export interface ChildOptions {
  /** The child in error messages ("file worker w1"); the command's name by default. */
  readonly name?: string;
  readonly cwd?: string | URL;
  /** Added to the parent's environment (or the whole environment, with `clearEnv`). */
  readonly env?: Record<string, string>;
  /** Start from an empty environment instead of the parent's. */
  readonly clearEnv?: boolean;
  /** `"piped"` to `send()` to the child or `closeStdin()`; `"null"` by default. */
  readonly stdin?: "piped" | "null";
  /** Written to the child's stdin at the start, which is then closed (implies `"piped"`). */
  readonly input?: string | Uint8Array;
  /** After this many milliseconds the child is SIGKILLed and waits on it fail (3 min default). */
  readonly timeLimitMs?: number;
  /** Keep stdout lines that are not JSON as `{ t: "raw", line }` records (else skipped). */
  readonly rawLines?: boolean;
  /** Called with every line of stdout and stderr as it arrives (to forward a child's log). */
  readonly echo?: (line: string) => void;
}

/** How a Deno child is started, besides the common options. */
export interface DenoChildOptions extends ChildOptions {
  /** The configuration it runs with (`denoRunArgs()`'s, tests/deno.json, by default). */
  readonly config?: string;
  /** Its permission flags (`--allow-all` by default). */
  readonly permissions?: readonly string[];
  /** A command and its arguments that runs `deno` (`setpriv ...`, `ip netns exec <ns>`). */
  readonly wrapper?: readonly string[];
}

const DEFAULT_TIME_LIMIT_MS = 180_000;
const STDERR_TAIL = 3_000;

interface Waiter {
  readonly match: (r: ChildRecord) => boolean;
  readonly from: number;
  readonly resolve: (index: number) => void;
  readonly reject: (e: Error) => void;
  readonly what: string;
}

/** A running child process and the JSON lines it printed. */
export class Child implements AsyncDisposable {
  /** Every record printed so far, in order. */
  readonly records: ChildRecord[] = [];
  /** The child in error messages. */
  readonly name: string;
  /** Resolves when the process has exited (killed or not); never rejects. */
  readonly status: Promise<Deno.CommandStatus>;
  readonly #child: Deno.ChildProcess;
  readonly #output: Promise<void>;
  readonly #timer: ReturnType<typeof setTimeout>;
  readonly #limitMs: number;
  readonly #rawLines: boolean;
  readonly #echo: ((line: string) => void) | undefined;
  #stdout = "";
  readonly #stdoutBytes: Uint8Array[] = [];
  #stderr = "";
  #exited = false;
  #ended = false;
  #timedOut = false;
  #cursor = 0;
  #waiters: Waiter[] = [];
  #stdin: WritableStreamDefaultWriter<Uint8Array> | undefined;

  constructor(cmd: string, args: readonly string[], options: ChildOptions = {}) {
    this.#limitMs = options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS;
    this.#rawLines = options.rawLines ?? false;
    this.#echo = options.echo;
    this.#child = new Deno.Command(cmd, {
      args: [...args],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.clearEnv ? { clearEnv: true } : {}),
      stdin: options.input === undefined ? options.stdin ?? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.name = `${options.name ?? cmd.split("/").at(-1)} (pid ${this.#child.pid})`;
    this.#timer = setTimeout(() => this.#expire(), this.#limitMs);
    this.status = this.#child.status.then((s) => {
      this.#exited = true;
      clearTimeout(this.#timer);
      return s;
    });
    this.#output = Promise.all([this.#readStdout(), this.#readStderr()]).then(() => {
      this.#ended = true;
      for (const w of this.#waiters.splice(0)) w.reject(this.#endedError(w.what));
    });
    // A child that exits before reading it all shows in its exit status, not here.
    if (options.input !== undefined) this.send(options.input).catch(() => {});
  }

  /** The process id. */
  get pid(): number {
    return this.#child.pid;
  }

  /** Everything the child printed on stdout so far. */
  get stdout(): string {
    return this.#stdout;
  }

  /** Everything the child printed on stderr so far. */
  get stderr(): string {
    return this.#stderr;
  }

  /** Whether the child was killed at its time limit. */
  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** The first record (printed already or still to come) that `match` accepts. */
  async waitFor(match: RecordMatch): Promise<ChildRecord> {
    return this.records[await this.#find(match, 0)]!;
  }

  /** The next record after the last one `next()` returned that `match` accepts. */
  async next(match: RecordMatch): Promise<ChildRecord> {
    const i = await this.#find(match, this.#cursor);
    this.#cursor = i + 1;
    return this.records[i]!;
  }

  /** Writes `text` to the child's stdin (started with `stdin: "piped"`). */
  async write(text: string | Uint8Array): Promise<void> {
    await this.#writer().write(typeof text === "string" ? new TextEncoder().encode(text) : text);
  }

  /** Writes `text` to the child's stdin and closes it. */
  async send(text: string | Uint8Array): Promise<void> {
    await this.write(text);
    await this.closeStdin();
  }

  /** Closes the child's stdin (its signal to stop, for some children). */
  async closeStdin(): Promise<void> {
    await this.#writer().close().catch(() => {});
  }

  /** Waits for the exit and all output; fails only when the time limit killed the child. */
  async finished(): Promise<ChildOutput> {
    const status = await this.status;
    await this.#output;
    if (this.#timedOut) throw this.#timeError();
    return {
      code: status.code,
      signal: status.signal,
      success: status.success,
      stdout: this.#stdout,
      stderr: this.#stderr,
      stdoutBytes: concat(this.#stdoutBytes),
    };
  }

  /** Like `finished()`, and fails naming the child and its stderr when it exited unsuccessfully. */
  async succeeded(): Promise<ChildOutput> {
    const out = await this.finished();
    if (!out.success) {
      throw new Error(
        `${this.name} exited with ${out.signal ?? out.code}; stderr:\n${this.#stderrTail()}`,
      );
    }
    return out;
  }

  /** Sends `signal` (SIGKILL by default) to the child's pid unless it has exited. */
  kill(signal: Deno.Signal = "SIGKILL"): void {
    if (this.#exited) return;
    try {
      Deno.kill(this.pid, signal);
    } catch {
      // It exited between the check and the kill.
    }
  }

  /** Kills the child if it still runs, and waits for it and its output. */
  async [Symbol.asyncDispose](): Promise<void> {
    this.kill();
    await this.status;
    await this.#output;
    clearTimeout(this.#timer);
  }

  #writer(): WritableStreamDefaultWriter<Uint8Array> {
    return (this.#stdin ??= this.#child.stdin.getWriter());
  }

  #find(match: RecordMatch, from: number): Promise<number> {
    const accept = typeof match === "string" ? (r: ChildRecord) => r.t === match : match;
    const what = typeof match === "string" ? ` "${match}"` : " the record it waited for";
    const i = this.records.findIndex((r, n) => n >= from && accept(r));
    if (i >= 0) return Promise.resolve(i);
    if (this.#timedOut) return Promise.reject(this.#timeError());
    if (this.#ended) return Promise.reject(this.#endedError(what));
    return new Promise((resolve, reject) =>
      this.#waiters.push({ match: accept, from, resolve, reject, what })
    );
  }

  #expire(): void {
    if (this.#exited) return;
    this.#timedOut = true;
    this.kill("SIGKILL");
    for (const w of this.#waiters.splice(0)) w.reject(this.#timeError());
  }

  #stderrTail(): string {
    return this.#stderr.length > STDERR_TAIL
      ? `...${this.#stderr.slice(-STDERR_TAIL)}`
      : this.#stderr;
  }

  #timeError(): Error {
    return new Error(
      `${this.name} ran past its time limit of ${this.#limitMs} ms and was killed (SIGKILL); ` +
        `stderr:\n${this.#stderrTail()}`,
    );
  }

  #endedError(what: string): Error {
    return new Error(`${this.name} ended its output before${what}; stderr:\n${this.#stderrTail()}`);
  }

  async #readStdout(): Promise<void> {
    const decoder = new TextDecoder();
    let pending = "";
    for await (const bytes of this.#child.stdout) {
      this.#stdoutBytes.push(bytes);
      const chunk = decoder.decode(bytes, { stream: true });
      this.#stdout += chunk;
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf("\n")) >= 0) {
        this.#accept(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
      }
    }
    const last = decoder.decode();
    this.#stdout += last;
    pending += last;
    if (pending !== "") this.#accept(pending);
  }

  async #readStderr(): Promise<void> {
    let pending = "";
    for await (const chunk of this.#child.stderr.pipeThrough(new TextDecoderStream())) {
      this.#stderr += chunk;
      if (this.#echo === undefined) continue;
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) this.#echo(line);
    }
    if (pending !== "") this.#echo?.(pending);
  }

  #accept(line: string): void {
    this.#echo?.(line);
    let record: ChildRecord;
    try {
      const parsed: unknown = JSON.parse(line);
      if (typeof parsed !== "object" || parsed === null) throw new Error("not a record");
      record = parsed as ChildRecord;
    } catch {
      if (!this.#rawLines) return;
      record = { t: "raw", line };
    }
    const index = this.records.push(record) - 1;
    this.#waiters = this.#waiters.filter((w) => {
      if (index < w.from || !w.match(record)) return true;
      w.resolve(index);
      return false;
    });
  }
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return all;
}

/** Starts `cmd` with `args`. */
export function spawnChild(
  cmd: string,
  args: readonly string[],
  options: ChildOptions = {},
): Child {
  return new Child(cmd, args, options);
}

/**
 * Starts `deno run` on `script` with `args`, the way every Deno child of the tests starts
 * (`denoRunArgs()`, `denoEnv()`), with `options.permissions` (`--allow-all` by default).
 */
export function spawnDeno(
  script: string | URL,
  args: readonly string[],
  options: DenoChildOptions = {},
): Child {
  const { config, permissions = ["--allow-all"], wrapper = [], env = {}, ...rest } = options;
  const path = script instanceof URL ? script.pathname : script;
  const [cmd, ...prefix] = [...wrapper, Deno.execPath()];
  const run = denoRunArgs(...(config === undefined ? [] : [config]));
  return new Child(cmd!, [...prefix, ...run, ...permissions, path, ...args], {
    name: path.split("/").at(-1)!,
    ...rest,
    env: { ...denoEnv(), ...env },
  });
}

/** Children started and disposed together. */
export class ChildGroup implements AsyncDisposable {
  readonly children: Child[] = [];

  /** Adds a started child to the group and returns it. */
  add<C extends Child>(child: C): C {
    this.children.push(child);
    return child;
  }

  /** Waits until every child has printed a record `match` accepts. */
  async waitForAll(match: RecordMatch): Promise<ChildRecord[]> {
    return await Promise.all(this.children.map((c) => c.waitFor(match)));
  }

  /** Waits for every child to exit; fails naming the first that exited unsuccessfully. */
  async succeeded(): Promise<void> {
    for (const c of this.children) await c.succeeded();
  }

  /** Kills every child still running and waits for all of them. */
  async [Symbol.asyncDispose](): Promise<void> {
    for (const c of this.children) c.kill();
    await Promise.all(this.children.map((c) => c[Symbol.asyncDispose]()));
  }
}
