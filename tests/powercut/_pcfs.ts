// The power-cut file system (pcfs.py) from Deno: mount it over a fresh backing directory, cut the
// power, remount, read its counters, stop it. Needs the "fuse" tool of tests/_lib/needs.ts.

import { type Child, spawnChild } from "../_lib/spawn.ts";
import { type TempDir, tempDir } from "../_lib/temp_dir.ts";

/** Debian's python, which has python3-pyfuse3 (the pyenv one first on PATH has not). */
export const PYTHON = "/usr/bin/python3";
const DAEMON = new URL("./pcfs.py", import.meta.url).pathname;
// The supervisor lives as long as a run, which can take hours; past this it is killed.
const DAEMON_TIME_LIMIT_MS = 12 * 60 * 60 * 1000;

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
  /** Commands the daemon did not answer in time (it was killed: a cut that kept nothing). */
  readonly stuck: number;
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
  readonly #root: TempDir;
  readonly #control: string;
  readonly #child: Child;
  #stopped = false;

  private constructor(root: TempDir, child: Child) {
    this.#root = root;
    this.mount = `${root.path}/mnt`;
    this.backing = `${root.path}/backing`;
    this.#control = `${root.path}/control.sock`;
    this.#child = child;
  }

  /** Mounts a new, empty file system under a new temp directory. */
  static async start(): Promise<PowerCutFs> {
    const dir = await tempDir("agentmem-powercut-");
    const root = dir.path;
    await Deno.mkdir(`${root}/mnt`);
    await Deno.mkdir(`${root}/backing`);
    const child = spawnChild(
      PYTHON,
      [DAEMON, "serve", `${root}/backing`, `${root}/mnt`, `${root}/control.sock`],
      { name: "pcfs.py", timeLimitMs: DAEMON_TIME_LIMIT_MS },
    );
    const fs = new PowerCutFs(dir, child);
    try {
      await child.waitFor((r) => r.ready === true);
    } catch (e) {
      await dir[Symbol.asyncDispose]();
      throw new Error(
        `the power-cut file system did not mount: ${e instanceof Error ? e.message : e}`,
      );
    }
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
      await spawnChild("fusermount3", ["-u", "-z", this.mount]).finished().catch(() => {});
    }
    await this.#child.status;
    await this.#root[Symbol.asyncDispose]();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  async #ask(line: string): Promise<PcfsStats> {
    try {
      return await this.#request(line);
    } catch (e) {
      // The daemon's stderr (a Python traceback) is the one place that says why.
      const why = this.#child.stderr.trim().slice(-2000);
      throw new Error(
        `power-cut file system: ${line}: ${e instanceof Error ? e.message : e}${
          why ? `; its stderr:\n${why}` : ""
        }`,
      );
    }
  }

  async #request(line: string): Promise<PcfsStats> {
    const conn = await Deno.connect({ transport: "unix", path: this.#control });
    try {
      await conn.write(new TextEncoder().encode(`${line}\n`));
      let text = "";
      for await (const chunk of conn.readable.pipeThrough(new TextDecoderStream())) {
        text += chunk;
        if (text.endsWith("\n")) break;
      }
      const reply = JSON.parse(text) as PcfsStats & { ok: boolean; error?: string };
      if (!reply.ok) throw new Error(String(reply.error));
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
