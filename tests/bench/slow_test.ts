// The bench counts the calls that took longer than the library's default timeout, which its own
// bound (bench/_location.ts, CALL_TIMEOUT_MS) lets finish, and names them in the notes.

import assert from "node:assert/strict";
import { type RunRecord, SLOW_MS, slowNotes, summarizePhase } from "../../bench/summarize.ts";

const phase = (latencies: number[]) => ({
  op: "create" as const,
  start: 0,
  end: 1_000,
  latencies,
  exists: 0,
  stale: 0,
  retries: 0,
  won: [],
  badReads: 0,
});

Deno.test("a phase counts its calls slower than the library's default timeout; the notes name them", () => {
  const slow = summarizePhase("create", [phase([900, SLOW_MS * 1000 + 1, 6_200_000])]);
  assert.equal(slow.overDefaultTimeout, 2);
  assert.equal(slow.maxMs, 6_200);
  const quick = summarizePhase("create", [phase([900, SLOW_MS * 1000])]);
  assert.equal(quick.overDefaultTimeout, 0);
  const run = (phases: RunRecord["phases"]): RunRecord => ({
    section: "main",
    trial: 0,
    keyspace: "disjoint",
    processes: 2,
    backend: "jetstream",
    target: "jetstream",
    phases,
  });
  assert.deepEqual(slowNotes([run([quick])]), []);
  const [note] = slowNotes([run([quick, slow])]);
  assert.match(note!, /^2 calls of the main runs took longer than the library's default timeout/);
  assert.match(note!, /jetstream create \(disjoint, trial 1\): 2, the slowest 6\.2 s/);
});
