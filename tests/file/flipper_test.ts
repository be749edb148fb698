// History I/O never goes through a symlink below the store's directory: Deno writers while a
// separate process swaps `.history`, or a key's directory in it, for a symlink to a directory
// outside (tests/file/_flip.ts). Node runs the same in tests/runtimes/runtimes_test.ts.

import assert from "node:assert/strict";
import { FLIP_TARGETS, flipRun } from "../_lib/flip.ts";
import { fileTest } from "./_fixture.ts";
import { spawnDeno } from "../_lib/spawn.ts";

const WORKER = new URL("../runtimes/flip_worker.ts", import.meta.url).pathname;

for (const target of FLIP_TARGETS) {
  fileTest(
    `writes, history and check never touch a directory outside through a swapped ${target}`,
    async (root) => {
      const { counts, swapped } = await flipRun({
        root,
        target,
        rounds: 30,
        writers: 2,
        start: (job) => spawnDeno(WORKER, [JSON.stringify(job)], { name: "flip writer" }),
      });
      console.log(`[flipper ${target}] ${swapped} swaps; ${JSON.stringify(counts)}`);
      // The writers met the symlink: some calls failed, typed.
      assert.ok(
        Object.keys(counts).some((k) => k.endsWith(" unavailable")),
        `no call ever met a symlink: ${JSON.stringify(counts)}`,
      );
    },
  );
}
