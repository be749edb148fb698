// Unit test of CapacityCheck, the count of a directory's entries that creates reserve against
// (through the backend's test face).

import assert from "node:assert/strict";
import { CapacityError } from "../../store/errors.ts";
import { MAX_ENTRIES } from "../../store/limits.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { CapacityCheck } from "../../backends/file/testing.ts";

Deno.test("capacity: a handle's reserved and linked creates count against one shared directory pass", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  for (let i = 0; i < MAX_ENTRIES - 3; i++) Deno.writeTextFileSync(`${dir}/f${i}.md`, "");
  const check = new CapacityCheck(dir);
  const a = check.begin();
  const slotA = check.reserve(a, "a"); // a pass: 1,021 entries
  const b = check.begin();
  const slotB = check.reserve(b, "b"); // a new pass (b started after the first)
  const c = check.begin();
  const slotC = check.reserve(c, "c");
  // Three reserved: the directory is full for this handle, though nothing is linked yet.
  assert.throws(() => check.reserve(check.begin(), "d"), CapacityError);
  slotA.released();
  const e = check.begin();
  const slotE = check.reserve(e, "e");
  // Linking is counted once, whether or not a pass since has seen the file.
  Deno.writeTextFileSync(`${dir}/b.md`, "");
  slotB.linked();
  slotC.released();
  const f = check.begin();
  const slotF = check.reserve(f, "f");
  assert.throws(() => check.reserve(check.begin(), "g"), CapacityError);
  slotE.released();
  slotF.released();
  // Files appearing from elsewhere are seen by the next pass a later create needs.
  Deno.writeTextFileSync(`${dir}/x.md`, "");
  Deno.writeTextFileSync(`${dir}/y.md`, "");
  assert.throws(() => check.reserve(check.begin(), "h"), CapacityError);
});
