// Runs tests/file/_rbu_worker.ts as a separate OS process (through tests/_lib/spawn.ts) and
// reads its JSON lines; `await using` kills it if it is still running.

import type { RbuJob } from "./_rbu_worker.ts";
import { type Child, spawnDeno } from "../_lib/spawn.ts";

const WORKER = new URL("./_rbu_worker.ts", import.meta.url).pathname;

/** Starts a worker with the given Deno permission flags (all by default). */
export function rbuWorker(job: RbuJob, permissions: readonly string[] = ["--allow-all"]): Child {
  return spawnDeno(WORKER, [JSON.stringify(job)], { name: `rbu worker (${job.job})`, permissions });
}

const HOLDER = new URL("./_lock_holder.ts", import.meta.url).pathname;

/**
 * A process that takes the lock of `key` in `dir` and holds it until it is killed (its first
 * record `locked` carries its token); with no key, one that prints its token and exits.
 */
export function lockHolder(dir?: string, key?: string): Child {
  const args = dir === undefined || key === undefined
    ? ["token"]
    : ["hold", `${Deno.realPathSync(dir)}/.${key}.lock`, key];
  return spawnDeno(HOLDER, args, { name: `lock holder (${args[0]})` });
}
