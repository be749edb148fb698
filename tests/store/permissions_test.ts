// The library must work for a program granted only what the file backend needs: read and write
// on the memory directory. No environment, network or run permission, and never a prompt.

import assert from "node:assert/strict";
import { spawnDeno } from "../_lib/spawn.ts";
import { tempDir } from "../_lib/temp_dir.ts";

const MOD = new URL("../../mod.ts", import.meta.url).href;

Deno.test("openFileStore() works with only --allow-read and --allow-write on its directory", async () => {
  await using tmp = await tempDir("agentmem-perm-");
  const dir = tmp.path;
  const script = `
    import { openFileStore, Scope } from ${JSON.stringify(MOD)};
    const store = await openFileStore({ dir: ${JSON.stringify(`${dir}/m`)} });
    const scope = new Scope();
    await store.create("k", "a description: with YAML", "body", { scope });
    await store.update("k", "changed: description", "new body", { scope });
    console.log(JSON.stringify({ list: await store.list(), read: await store.read("k") }));
  `;
  await Deno.writeTextFile(`${dir}/script.ts`, script);
  const out = await spawnDeno(`${dir}/script.ts`, [], {
    permissions: [
      `--allow-read=${dir},${new URL("../..", import.meta.url).pathname}`,
      `--allow-write=${dir}`,
    ],
  }).finished();
  const stderr = out.stderr;
  assert.equal(out.code, 0, stderr);
  assert.deepEqual(JSON.parse(out.stdout), {
    list: [{ key: "k", description: "changed: description" }],
    read: { description: "changed: description", content: "new body" },
  });
});
