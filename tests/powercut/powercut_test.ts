// A short seeded power-cut run inside `deno task test`: a few dozen cuts of the file backend's
// workloads (durable, durable with read-before-update, `durable: false`) in separate processes
// on the power-cut file system. `deno task powercut` is the long run.

import assert from "node:assert/strict";
import { assertTools, needs } from "../_lib/needs.ts";
import { reportLines } from "./main.ts";
import { type PowercutResult, runPowercut } from "./run.ts";

const NEEDS = needs("the power-cut run", "fuse");
const SEED = 2021;
const CUTS = 20;

let run: Promise<PowercutResult> | undefined;
// One run serves every test below; each asserts one property of it.
function shortRun(): Promise<PowercutResult> {
  run ??= runPowercut({ cuts: CUTS, seed: SEED, cliEvery: 12, log: () => {} }).then((r) => {
    console.log(reportLines(SEED, r).join("\n"));
    return r;
  });
  return run;
}

// A test of the short run (run once, shared): `check` asserts what it must show.
function runTest(name: string, check: (r: PowercutResult) => void): void {
  Deno.test({ name: `powercut: ${name}`, ...NEEDS }, async () => {
    assertTools("fuse");
    check(await shortRun());
  });
}

runTest("every acknowledged durable write survives the cuts whole", (r) => {
  assert.deepEqual(r.errors, []);
  assert.equal(r.cuts, CUTS);
  assert.ok(r.durable.acknowledged > CUTS, `only ${r.durable.acknowledged} writes acknowledged`);
  assert.equal(r.durable.lost, 0, "acknowledged durable writes were lost");
  assert.equal(r.durable.torn, 0, "durable entries were torn");
  assert.equal(r.unknown, 0, "keys held states no write left");
  assert.equal(r.strangers, 0, "names no write made appeared");
});

runTest("list(), read(), auditStore and agentmem check agree after every cut", (r) => {
  assert.equal(r.disagreements, 0);
});

runTest("history and head agree after every cut, with every acknowledged write's version", (r) => {
  assert.equal(r.durable.history, 0, "durable keys' history and head disagreed after a cut");
  assert.equal(r.historyMissing, 0, "acknowledged durable writes had no version after a cut");
});

runTest("durable: false loses writes but never shows a torn entry", (r) => {
  assert.ok(r.nonDurable.acknowledged > 0);
  assert.equal(r.nonDurable.torn, 0, "durable: false entries were torn (empty) after a cut");
  // Versions may go with the writes a cut loses (reported by the run, not asserted).
});

runTest("nothing a cut leaves behind blocks a later write", (r) => {
  assert.equal(r.blocked, 0, "writes after the remount were blocked");
});
