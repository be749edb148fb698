// Runs tests/file/_rbu_worker.ts as a separate OS process (through tests/_lib/spawn.ts) and
// reads its JSON lines; `await using` kills it if it is still running.

import type { RbuJob } from "./_rbu_worker.ts";
import { type Child, spawnDeno } from "../_lib/spawn.ts";

const WORKER = new URL("./_rbu_worker.ts", import.meta.url).pathname;

/** Starts a worker with the given Deno permission flags (all by default). */
export function rbuWorker(job: RbuJob, permissions: readonly string[] = ["--allow-all"]): Child {
  return spawnDeno(WORKER, [JSON.stringify(job)], { name: `rbu worker (${job.job})`, permissions });
}
