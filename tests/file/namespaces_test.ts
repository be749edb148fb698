// The file backend's locks and temp-file sweep across pid namespaces: writers inside one
// `unshare -p -f` namespace that sees the host's /proc (where process.pid names another process),
// writers in separate "containers" with their own /proc sharing one directory, and a mix of both
// with host writers and Deno writers that may not read /proc at all. Every writer makes
// revision-checked read-modify-write increments of one counter and lists the directory often
// (listing sweeps what dead writers left): no increment may be lost and no write may fail, which a
// writer that took a live process's lock or temp file for a dead one's would cause.

import { countTogether, denoRunner, type Runner, type Where } from "../_lib/lock_fleet.ts";
import { assertTools, needs } from "../_lib/needs.ts";
import { tempDir } from "../_lib/temp_dir.ts";

/** A test counting with the writers `groups(dir)` over one fresh directory (as root). */
function nsTest(
  name: string,
  groups: (dir: string) => ReadonlyArray<readonly [Where, readonly Runner[]]>,
): void {
  Deno.test({
    name,
    ...needs("the pid namespace tests", "root", "unshare"),
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      assertTools("root", "unshare");
      await using dir = await tempDir("agentmem-ns-");
      await countTogether(dir.path, groups(dir.path));
    },
  });
}

nsTest(
  "4 writers in one pid namespace that sees the host's /proc lose no increment",
  () => [["ns", Array(4).fill(denoRunner())]],
);

nsTest(
  "two containers with their own /proc, 2 writers each, sharing one directory lose nothing",
  (dir) => [
    ["container", [denoRunner(), denoRunner()]],
    ["container", [denoRunner(), denoRunner(dir)]],
  ],
);

nsTest(
  "host writers, a namespace on the host's /proc and a container, with and without /proc access, lose nothing",
  (dir) => [
    ["host", [denoRunner(), denoRunner(dir)]],
    ["ns", [denoRunner(), denoRunner()]],
    ["container", [denoRunner(), denoRunner(dir)]],
  ],
);
