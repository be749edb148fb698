// The races between real OS processes of any runtimes over one directory, for
// runtimes_test.ts: every racer creates (or, with revision checks, updates from one read)
// the same keys in the same order after one start signal; each key must have exactly one winner,
// every other racer must get ExistsError (StaleError), and the stored body must be the winner's.
// Deno-side helper.

import assert from "node:assert/strict";
import { openFileStore } from "../../mod.ts";
import { spawnChild } from "../_lib/spawn.ts";
import type { RaceJob, RaceReport } from "./race_worker.ts";
import { denoEnv, denoRunArgs } from "../_lib/deno_child.ts";

/** How to start one racer: a command whose last argument will be the job's JSON. */
export interface Racer {
  readonly id: string;
  readonly cmd: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  /** Added to the environment (besides NO_COLOR=1). */
  readonly env?: Record<string, string>;
}

const SOURCE_WORKER = new URL("./race_worker.ts", import.meta.url).pathname;

/** A Deno racer running race_worker.ts from source, allowed only the race directory. */
export function denoRacer(id: string, dir: string): Racer {
  return {
    id,
    cmd: Deno.execPath(),
    args: [
      ...denoRunArgs(),
      `--allow-read=${dir}`,
      `--allow-write=${dir}`,
      SOURCE_WORKER,
    ],
    env: denoEnv(),
  };
}

/**
 * Runs the racers over `dir` on `keys` and checks the outcome. In "update" mode the keys are
 * created first, and every racer updates each from its own read. Returns how many keys each racer
 * won (reported, never asserted: who wins is up to the scheduler).
 */
export async function race(
  dir: string,
  keys: readonly string[],
  racers: readonly Racer[],
  mode: "create" | "update" = "create",
): Promise<Record<string, number>> {
  if (mode === "update") {
    const seed = await openFileStore({ dir });
    for (const key of keys) await seed.create(key, "seed", "seed");
  }
  const procs = racers.map((r) => {
    const job: RaceJob = { dir, keys, id: r.id, mode };
    return spawnChild(r.cmd, [...r.args, JSON.stringify(job)], {
      name: `racer ${r.id}`,
      ...(r.cwd === undefined ? {} : { cwd: r.cwd }),
      env: { NO_COLOR: "1", ...r.env },
      stdin: "piped",
    });
  });
  try {
    const ready = await Promise.allSettled(procs.map((p) => p.waitFor("ready")));
    for (const [i, line] of ready.entries()) {
      if (line.status === "rejected") {
        const { stderr } = await procs[i]!.finished();
        assert.fail(`racer ${racers[i]!.id} exited before it was ready:\n${stderr.slice(-2000)}`);
      }
    }
    await Promise.all(procs.map((p) => p.send("go\n")));
    const reports: RaceReport[] = [];
    for (const [i, p] of procs.entries()) {
      const { code, stderr } = await p.finished();
      const report = p.records.find((l) => l.t === "done") as RaceReport | undefined;
      assert.ok(report && code === 0, `racer ${racers[i]!.id} failed (${code}):\n${stderr}`);
      assert.deepEqual(report.errors, [], `racer ${report.id} had unexpected errors`);
      reports.push(report);
    }
    const store = await openFileStore({ dir });
    for (const key of keys) {
      const winners = reports.filter((r) => r.won.includes(key)).map((r) => r.id);
      assert.equal(winners.length, 1, `key ${key} has winners ${JSON.stringify(winners)}`);
      for (const r of reports) {
        if (r.id !== winners[0]) {
          assert.ok(r.lost.includes(key), `${r.id} neither won nor lost ${key}`);
        }
      }
      assert.deepEqual(await store.read(key), {
        description: `writer ${winners[0]}`,
        content: winners[0],
      });
    }
    assert.equal((await store.list()).length, keys.length);
    return Object.fromEntries(reports.map((r) => [r.id, r.won.length]));
  } finally {
    await Promise.all(procs.map((p) => p[Symbol.asyncDispose]()));
  }
}
