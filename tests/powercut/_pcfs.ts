// The power-cut file system (pcfs.py) from Deno: mount it over a fresh backing directory, cut the
// power, remount, read its counters, stop it. Needs the "fuse" tool of tests/_lib/needs.ts.

/** Debian's python, which has python3-pyfuse3 (the pyenv one first on PATH has not). */
export const PYTHON = "/usr/bin/python3";
const DAEMON = new URL("./pcfs.py", import.meta.url).pathname;

/** What the daemon counts, per mount (the last one before a cut) and in total. */
export interface PcfsStats {
  readonly syncs: number;
  readonly dirsyncs: number;
  readonly writes: number;
  readonly ops: number;
  readonly cuts: number;
  readonly remounts: number;
  readonly mounts: number;
  readonly crashes: number;
  /** After a cut: what no sync covered and the cut dropped, or kept (with `keep`). */
  readonly dropped_files?: number;
  readonly dropped_dirs?: number;
  readonly kept_files?: number;
  readonly kept_dirs?: number;
  readonly dirty?: number;
}

/** How a cut treats what no sync covered. */
export interface CutOptions {
  /** The chance that each unsynced file or directory keeps its current state whole (default 0). */
  readonly keep?: number;
  /** Seeds that choice. */
  readonly seed?: number;
}

/** A mounted power-cut file system. */
export class PowerCutFs implements AsyncDisposable {
  /** Where it is mounted: what the code under test uses. */
  readonly mount: string;
  /** Its durable state (meta.json, data/): what survives a cut. */
  readonly backing: string;
  readonly #root: string;
  readonly #control: string;
  readonly #child: Deno.ChildProcess;
  #stopped = false;

  private constructor(root: string, child: Deno.ChildProcess) {
    this.#root = root;
    this.mount = `${root}/mnt`;
    this.backing = `${root}/backing`;
    this.#control = `${root}/control.sock`;
    this.#child = child;
  }

  /** Mounts a new, empty file system under a new temp directory. */
  static async start(): Promise<PowerCutFs> {
    const root = await Deno.makeTempDir({ prefix: "agentmem-powercut-" });
    await Deno.mkdir(`${root}/mnt`);
    await Deno.mkdir(`${root}/backing`);
    const child = new Deno.Command(PYTHON, {
      args: [DAEMON, "serve", `${root}/backing`, `${root}/mnt`, `${root}/control.sock`],
      stdin: "null",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const fs = new PowerCutFs(root, child);
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const first = await reader.read();
    reader.releaseLock();
    if (first.done || !first.value.includes('"ready"')) {
      await child.status;
      await Deno.remove(root, { recursive: true }).catch(() => {});
      throw new Error("the power-cut file system did not mount (see its stderr above)");
    }
    child.stdout.cancel().catch(() => {});
    return fs;
  }

  /**
   * Cuts the power: everything no sync covered is dropped (or kept, with `keep`), and the file
   * system is mounted again, so descriptors opened before fail. Stop writers before calling it.
   */
  cut(opts: CutOptions = {}): Promise<PcfsStats> {
    const words = ["cut"];
    if (opts.keep !== undefined) words.push(`keep=${opts.keep}`);
    if (opts.seed !== undefined) words.push(`seed=${opts.seed}`);
    return this.#ask(words.join(" "));
  }

  /** A clean reboot: everything is synced, then the file system is mounted again. */
  remount(): Promise<PcfsStats> {
    return this.#ask("remount");
  }

  /** The daemon's counters. */
  stats(): Promise<PcfsStats> {
    return this.#ask("stats");
  }

  /** Unmounts, stops the daemon and removes every directory it used. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    try {
      await this.#ask("stop");
    } catch {
      this.#child.kill("SIGKILL");
      await new Deno.Command("fusermount3", { args: ["-u", "-z", this.mount], stderr: "null" })
        .output().catch(() => {});
    }
    await this.#child.status;
    await Deno.remove(this.#root, { recursive: true });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  async #ask(line: string): Promise<PcfsStats> {
    const conn = await Deno.connect({ transport: "unix", path: this.#control });
    try {
      await conn.write(new TextEncoder().encode(`${line}\n`));
      let text = "";
      for await (const chunk of conn.readable.pipeThrough(new TextDecoderStream())) {
        text += chunk;
        if (text.endsWith("\n")) break;
      }
      const reply = JSON.parse(text) as PcfsStats & { ok: boolean; error?: string };
      if (!reply.ok) throw new Error(`power-cut file system: ${line}: ${reply.error}`);
      return reply;
    } finally {
      try {
        conn.close();
      } catch {
        // The stream's end closed it already.
      }
    }
  }
}
