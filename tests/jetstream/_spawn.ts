// Starts tests/jetstream/_worker.ts as a separate OS process (through tests/_lib/spawn.ts) with
// only the network and reads it needs; read its records in order with `next()`.

import type { Job } from "./_worker.ts";
import { type Child, spawnDeno } from "../_lib/spawn.ts";

const WORKER = new URL("./_worker.ts", import.meta.url).pathname;

/** Starts a worker for `job`. */
export function jetstreamWorker(job: Job): Child {
  return spawnDeno(WORKER, [JSON.stringify(job)], {
    name: `jetstream worker (${job.mode})`,
    permissions: ["--allow-net=127.0.0.1", "--allow-env", "--allow-sys", "--allow-read"],
  });
}
