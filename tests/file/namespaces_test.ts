// The file backend's locks and temp-file sweep across pid namespaces: writers inside one
// `unshare -p -f` namespace that sees the host's /proc (where process.pid names another process),
// writers in separate "containers" with their own /proc sharing one directory, and a mix of both
// with host writers and Deno writers that may not read /proc at all. Every writer makes
// revision-checked read-modify-write increments of one counter and lists the directory often
// (listing sweeps what dead writers left): no increment may be lost and no write may fail, which a
// writer that took a live process's lock or temp file for a dead one's would cause.

import { countTogether, denoRunner } from "./_lock_fleet.ts";
import { assertTools, needs } from "../_lib/needs.ts";

const NEEDS = needs("the pid namespace tests", "root", "unshare");

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
  assertTools("root", "unshare");
  const made = await Deno.makeTempDir({ prefix: "agentmem-ns-" });
  try {
    await fn(await Deno.realPath(made));
  } finally {
    await Deno.remove(made, { recursive: true });
  }
}
