// The power-cut run can fail: with the workers' directory fsyncs skipped (an LD_PRELOAD shim, built
// with gcc) it must report lost acknowledged creates; with their file fsyncs before link and
// rename skipped, torn or empty entries.

import assert from "node:assert/strict";
import { assertTools, needs } from "../_lib/needs.ts";
import { reportLines } from "./main.ts";
import { GROUPS, type PowercutResult, runPowercut } from "./run.ts";
import { shimEnv } from "./_shim.ts";

const NEEDS = needs("the power-cut shim runs", "fuse", "gcc");

async function shimRun(skip: "dirs" | "files", seed: number) {
  const r = await runPowercut({
    cuts: 8,
    seed,
    groups: GROUPS.filter((g) => g.durable),
    workerEnv: await shimEnv(skip),
    cliEvery: 8,
    log: () => {},
  });
  console.log(reportLines(seed, r).join("\n"));
  assert.deepEqual(r.errors, []);
  return r;
}

// A shim run as a test: `check` says what it must have reported.
function shimTest(
  name: string,
  mode: "dirs" | "files",
  seed: number,
  check: (r: PowercutResult) => void,
) {
  Deno.test({ name: `powercut: ${name}`, ...NEEDS }, async () => {
    assertTools("fuse", "gcc");
    check(await shimRun(mode, seed));
  });
}

shimTest("directory fsyncs skipped, acknowledged creates are reported lost", "dirs", 31, (r) => {
  assert.ok(r.durable.lostBy.create > 0, `no lost create reported: ${JSON.stringify(r.durable)}`);
});

shimTest("file fsyncs skipped, torn or empty entries are reported", "files", 32, (r) => {
  assert.ok(r.durable.torn > 0, `no torn entry reported: ${JSON.stringify(r.durable)}`);
});
