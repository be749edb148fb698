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

// A store on the power-cut file system holding version 1 of "a".
async function withVersion1(pc: PowerCutFs) {
  const dir = `${pc.mount}/store`;
  await Deno.mkdir(dir);
  const v1 = entryFor("a", 1);
  await (await openFileStore({ dir })).create("a", v1.description, v1.content);
  return { dir, v1 };
}

// Writes version 2 of "a" over `dir` in a process whose syncs of paths matching `stall` wait 4 s,
// cuts the power 1.5 s into it, and opens the store again.
async function cutInsideUpdate(pc: PowerCutFs, o: { dir: string; stall: string }) {
  const writer = spawnDeno(ONE_WRITE, [JSON.stringify({ dir: o.dir, key: "a", version: 2 })], {
    name: "one write",
    env: await stallEnv(4_000, o.stall),
  });
  await writer.waitFor("begin");
  await new Promise((r) => setTimeout(r, 1_500));
  writer.kill();
  await writer.finished();
  assert.ok(!writer.records.some((r) => r.t === "done"), "the write finished before the cut");
  await pc.cut();
  const after = await openFileStore({ dir: o.dir });
  assert.deepEqual((await auditStore(after)).history ?? [], [], "agentmem check finds problems");
  return { after, head: await after.read("a"), versions: await history(after, "a") };
}

Deno.test({
  name:
    "powercut: a write cut inside its version directory's flush is in history and head, or in neither",
  ...needs("the power-cut history test", "fuse", "gcc"),
}, async () => {
  assertTools("fuse", "gcc");
  await using pc = await PowerCutFs.start();
  const { dir } = await withVersion1(pc);
  await pc.remount();
  // The writer's syncs of .history/a wait: the cut comes inside them.
  const { after, head, versions: [newest] } = await cutInsideUpdate(pc, {
    dir,
    stall: "/.history/a",
  });
  assert.ok(newest !== undefined);
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
  const { dir, v1 } = await withVersion1(pc);
  // What a cut inside a create's last flush can leave: the head, and no directory of its own
  // under .history (its name there was not on disk yet).
  await Deno.remove(`${dir}/.history/a`, { recursive: true });
  await pc.remount();
  // The writer's syncs of .history itself wait; its key's directory's do not. The head moves on
  // only once the version it replaced is on disk, directory and all.
  const { after, head, versions } = await cutInsideUpdate(pc, { dir, stall: "/.history$" });
  assert.equal(versions[0]!.description, head.description, "the newest version is not the head");
  assert.equal((await readVersion(after, "a", "1")).content, v1.content);
});
