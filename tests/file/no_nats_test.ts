// A file-only user never loads the NATS client: a script that imports mod.ts, opens a file store
// and uses it (and the memory tools) must not load @nats-io/*, nuid, nkeys or tweetnacl at run
// time. Type imports do not count and static graphs (deno info) over-count, so the child runs with
// Deno's debug log on, which names every module file it loads, and the test reads the npm
// packages from there. A control child that does load nats-core shows the log still tells.

import assert from "node:assert/strict";
import { ROOT_CONFIG } from "../_lib/deno_child.ts";
import { spawnDeno } from "../_lib/spawn.ts";
import { tempDir } from "../_lib/temp_dir.ts";

const MOD = new URL("../../mod.ts", import.meta.url).href;
const NATS = /^(@nats-io\/|nuid$|nkeys\.js$|nkeys$|tweetnacl$)/;

// The npm packages whose files a child script loaded.
async function loadedPackages(script: string): Promise<Set<string>> {
  await using tmp = await tempDir("agentmem-no-nats-");
  const dir = tmp.path;
  const file = `${dir}/script.ts`;
  await Deno.writeTextFile(file, script.replaceAll("MOD", MOD).replaceAll("DIR", `${dir}/m`));
  await using child = spawnDeno(file, [], {
    config: ROOT_CONFIG,
    env: { DENO_LOG: "debug" },
    timeLimitMs: 60_000,
    rawLines: true,
  });
  const out = await child.succeeded();
  const log = out.stderr;
  assert.equal(out.stdout.trim().split("\n").at(-1), "done");
  const packages = new Set<string>();
  for (const m of log.matchAll(/registry\.npmjs\.org\/((?:@[^/\s]+\/)?[^/\s]+)\//g)) {
    packages.add(m[1]!);
  }
  return packages;
}

Deno.test("a file-only script that imports mod.ts loads no NATS module at run time", async () => {
  const packages = await loadedPackages(`
    import { memoryTools, openFileStore, runTool } from "MOD";
    const store = await openFileStore({ dir: "DIR" });
    await store.create("k", "A key", "body");
    await store.read("k");
    await store.list();
    await runTool(memoryTools(store), "memory_list", {});
    console.log("done");
  `);
  // The log does name the packages the file store uses.
  assert.ok(packages.has("yaml"), [...packages].join(", "));
  assert.deepEqual([...packages].filter((p) => NATS.test(p)), []);
});

Deno.test("the load check sees a NATS module when one is loaded (control)", async () => {
  const packages = await loadedPackages(`
    import { openFileStore } from "MOD";
    await openFileStore({ dir: "DIR" });
    await import("@nats-io/nats-core");
    console.log("done");
  `);
  assert.ok([...packages].some((p) => p === "@nats-io/nats-core"), [...packages].join(", "));
});
