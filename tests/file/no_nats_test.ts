// A file-only user never loads the NATS client: a script that imports mod.ts, opens a file store
// and uses it (and the memory tools) must not load @nats-io/*, nuid, nkeys or tweetnacl at run
// time. Type imports do not count and static graphs (deno info) over-count, so the child runs with
// Deno's debug log on, which names every module file it loads, and the test reads the npm
// packages from there. A control child that does load nats-core shows the log still tells.

import assert from "node:assert/strict";
import { denoEnv, denoRunArgs, ROOT_CONFIG } from "../_lib/deno_child.ts";

const MOD = new URL("../../mod.ts", import.meta.url).href;
const NATS = /^(@nats-io\/|nuid$|nkeys\.js$|nkeys$|tweetnacl$)/;

// The npm packages whose files a child script loaded.
async function loadedPackages(script: string): Promise<Set<string>> {
  const dir = await Deno.makeTempDir({ prefix: "agentmem-no-nats-" });
  try {
    const file = `${dir}/script.ts`;
    await Deno.writeTextFile(file, script.replaceAll("MOD", MOD).replaceAll("DIR", `${dir}/m`));
    const out = await new Deno.Command(Deno.execPath(), {
      args: [...denoRunArgs(ROOT_CONFIG), "--allow-all", file],
      env: { ...denoEnv(), DENO_LOG: "debug" },
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(60_000),
    }).output();
    const log = new TextDecoder().decode(out.stderr);
    assert.ok(out.success, log.slice(-2000));
    assert.equal(new TextDecoder().decode(out.stdout).trim(), "done");
    const packages = new Set<string>();
    for (const m of log.matchAll(/registry\.npmjs\.org\/((?:@[^/\s]+\/)?[^/\s]+)\//g)) {
      packages.add(m[1]!);
    }
    return packages;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
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
