// History and head after a power cut inside a write: the write in flight is in both or in
// neither. A slow sync (the fsync shim's stall, LD_PRELOAD) holds the write inside its flush of
// the key's version directory, so the cut falls exactly there.

import assert from "node:assert/strict";
import { auditStore, history, openFileStore, readVersion } from "../../mod.ts";
import { assertTools, needs } from "../_lib/needs.ts";
import { spawnDeno } from "../_lib/spawn.ts";
import { entryFor } from "./_content.ts";
import { PowerCutFs } from "./_pcfs.ts";
import { stallEnv } from "./_shim.ts";

const ONE_WRITE = new URL("./_one_write.ts", import.meta.url);

Deno.test({
  name:
    "powercut: a write cut inside its version directory's flush is in history and head, or in neither",
  ...needs("the power-cut history test", "fuse", "gcc"),
}, async () => {
  assertTools("fuse", "gcc");
  await using pc = await PowerCutFs.start();
  const dir = `${pc.mount}/store`;
  await Deno.mkdir(dir);
  await pc.remount();
  const store = await openFileStore({ dir });
  const v1 = entryFor("a", 1);
  await store.create("a", v1.description, v1.content);
  // The writer's syncs of .history/a wait 4 s: the cut comes 1.5 s into the write.
  const writer = spawnDeno(ONE_WRITE, [JSON.stringify({ dir, key: "a", version: 2 })], {
    name: "one write",
    env: await stallEnv(4_000, "/.history/a"),
  });
  await writer.waitFor("begin");
  await new Promise((r) => setTimeout(r, 1_500));
  writer.kill();
  await writer.finished();
  assert.ok(!writer.records.some((r) => r.t === "done"), "the write finished before the cut");
  await pc.cut();
  const after = await openFileStore({ dir });
  const head = await after.read("a");
  const [newest] = await history(after, "a");
  assert.ok(newest !== undefined);
  assert.deepEqual((await auditStore(after)).history ?? [], [], "agentmem check finds problems");
  assert.equal(newest.description, head.description, "the newest version is not the head");
  assert.deepEqual(await readVersion(after, "a", newest.revision), head);
  // And the next write chains on: no gap for agentmem check to find later.
  const v3 = entryFor("a", 3);
  await after.update("a", v3.description, v3.content);
  assert.deepEqual((await auditStore(after)).history ?? [], []);
});

Deno.test({
  name:
    "powercut: a head whose history directory a cut lost keeps its version through the next write's cut",
  ...needs("the power-cut history test", "fuse", "gcc"),
}, async () => {
  assertTools("fuse", "gcc");
  await using pc = await PowerCutFs.start();
  const dir = `${pc.mount}/store`;
  await Deno.mkdir(dir);
  const store = await openFileStore({ dir });
  const v1 = entryFor("a", 1);
  await store.create("a", v1.description, v1.content);
  // What a cut inside a create's last flush can leave: the head, and no directory of its own
  // under .history (its name there was not on disk yet).
  await Deno.remove(`${dir}/.history/a`, { recursive: true });
  await pc.remount();
  // The writer's syncs of .history itself wait 4 s; its key's directory's do not.
  const writer = spawnDeno(ONE_WRITE, [JSON.stringify({ dir, key: "a", version: 2 })], {
    name: "one write",
    env: await stallEnv(4_000, "/.history$"),
  });
  await writer.waitFor("begin");
  await new Promise((r) => setTimeout(r, 1_500));
  writer.kill();
  await writer.finished();
  assert.ok(!writer.records.some((r) => r.t === "done"), "the write finished before the cut");
  await pc.cut();
  const after = await openFileStore({ dir });
  const head = await after.read("a");
  // The head moved on only once the version it replaced was on disk, directory and all.
  assert.deepEqual((await auditStore(after)).history ?? [], [], "agentmem check finds problems");
  const versions = await history(after, "a");
  assert.equal(versions[0]!.description, head.description, "the newest version is not the head");
  assert.equal((await readVersion(after, "a", "1")).content, v1.content);
});
