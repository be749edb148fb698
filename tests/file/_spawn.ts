// Starts tests/file/_worker.ts as separate OS processes (through tests/_lib/spawn.ts), each
// allowed only its directories, and collects the JSON lines they print.

import type { Job } from "./_worker.ts";
import { type Child, ChildGroup, type ChildRecord, spawnDeno } from "../_lib/spawn.ts";

const WORKER = new URL("./_worker.ts", import.meta.url).pathname;

/** How a worker is started, besides its job and its directories. */
export interface SpawnOptions {
  /** Extra files the worker may only read. */
  readonly readOnlyPaths?: readonly string[];
  /** A command and its arguments that runs `deno` (e.g. `setpriv` dropping capabilities). */
  readonly wrapper?: readonly string[];
}

/** One JSON line a worker printed (a line that is not JSON is `{ t: "raw", line }`). */
export type WorkerRecord = ChildRecord;

/** A set of workers disposed together. */
export class WorkerGroup extends ChildGroup {
  /** The workers started so far. */
  get workers(): readonly Child[] {
    return this.children;
  }

  /**
   * Starts a worker and adds it to the group.
   *
   * @param job What the worker does.
   * @param paths The directories it may read and write (nothing else).
   * @param options `readOnlyPaths`: extra files it may only read; `wrapper`: a command (and its
   * arguments) that runs `deno`, such as `setpriv` dropping capabilities.
   */
  spawn(job: Job, paths: readonly string[], options: SpawnOptions = {}): Child {
    const { readOnlyPaths = [], wrapper = [] } = options;
    return this.add(spawnDeno(WORKER, [JSON.stringify(job)], {
      name: `file worker ${"id" in job ? job.id : job.mode}`,
      permissions: [
        `--allow-read=${[...paths, ...readOnlyPaths].join(",")}`,
        `--allow-write=${paths.join(",")}`,
      ],
      wrapper,
      rawLines: true,
    }));
  }

  /** Waits until every worker has printed its `ready` line. */
  async ready(): Promise<void> {
    await this.waitForAll("ready");
  }
}
