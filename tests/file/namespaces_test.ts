// The file backend's locks and temp-file sweep across pid namespaces: writers inside one
// `unshare -p -f` namespace that sees the host's /proc (where process.pid names another process),
// writers in separate "containers" with their own /proc sharing one directory, and a mix of both
// with host writers and Deno writers that may not read /proc at all. Every writer makes
// revision-checked read-modify-write increments of one counter and lists the directory often
// (listing sweeps what dead writers left): no increment may be lost and no write may fail, which a
// writer that took a live process's lock or temp file for a dead one's would cause.

import assert from "node:assert/strict";
import { openFileStore } from "../../mod.ts";
import { denoRunner, type Runner, startGroup, type Where } from "./_lock_fleet.ts";
import { assertTools, needs } from "../_lib/needs.ts";

const N = 120;
const NEEDS = needs("the pid namespace tests", "root", "unshare");

/** Runs counters in `groups` over `dir` and checks that every increment landed. */
async function countTogether(
  dir: string,
  groups: ReadonlyArray<readonly [Where, readonly Runner[]]>,
): Promise<void> {
  assertTools("root", "unshare");
  const store = await openFileStore({ dir, readBeforeUpdate: true });
  await store.create("counter", "counter", "0");
  const job = { job: "counter", dir, key: "counter", n: N, listEvery: 3 } as const;
  const procs = groups.flatMap(([where, runners]) =>
    startGroup(where, runners.map((r) => [r, job] as const))
  );
  const members = groups.reduce((n, [, runners]) => n + runners.length, 0);
  try {
    const ends = await Promise.all(procs.map((p) => p.finished()));
    for (const [i, end] of ends.entries()) {
      const errors = procs[i]!.records.filter((l) => l.t === "error");
      assert.equal(end.code, 0, `writers failed: ${JSON.stringify(errors)}\n${end.stderr}`);
    }
  } finally {
    for (const p of procs) await p[Symbol.asyncDispose]();
  }
  const done = procs.flatMap((p) => p.records.filter((l) => l.t === "done"));
  assert.equal(done.length, members);
  assert.equal((await store.read("counter")).content, String(N * members), "increments lost");
  // Every writer exited normally: it left no lock and no temp file.
  assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["counter.md"]);
}

Deno.test({
  name: "4 writers in one pid namespace that sees the host's /proc lose no increment",
  ...NEEDS,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: () => withDir((dir) => countTogether(dir, [["ns", Array(4).fill(denoRunner())]])),
});

Deno.test({
  name: "two containers with their own /proc, 2 writers each, sharing one directory lose nothing",
  ...NEEDS,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: () =>
    withDir((dir) =>
      countTogether(dir, [
        ["container", [denoRunner(), denoRunner()]],
        ["container", [denoRunner(), denoRunner(dir)]],
      ])
    ),
});

Deno.test({
  name:
    "host writers, a namespace on the host's /proc and a container, with and without /proc access, lose nothing",
  ...NEEDS,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: () =>
    withDir((dir) =>
      countTogether(dir, [
        ["host", [denoRunner(), denoRunner(dir)]],
        ["ns", [denoRunner(), denoRunner()]],
        ["container", [denoRunner(), denoRunner(dir)]],
      ])
    ),
});

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const made = await Deno.makeTempDir({ prefix: "agentmem-ns-" });
  try {
    await fn(await Deno.realPath(made));
  } finally {
    await Deno.remove(made, { recursive: true });
  }
}
