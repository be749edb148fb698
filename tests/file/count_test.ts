// Unit test of CapacityCheck, the count of a directory's entries that creates reserve against
// (through the backend's test face).

import assert from "node:assert/strict";
import { CapacityError } from "../../store/errors.ts";
import { MAX_ENTRIES } from "../../store/limits.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import {
  CapacityCheck,
  CreateMarks,
  MAX_MARK_BYTES,
  REFRESH_MS,
} from "../../backends/file/testing.ts";

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
  // Entries another handle links (and marks) are seen by the next pass a later create needs.
  const other = new CreateMarks(dir);
  Deno.writeTextFileSync(`${dir}/x.md`, "");
  other.mark();
  Deno.writeTextFileSync(`${dir}/y.md`, "");
  other.mark();
  assert.throws(() => check.reserve(check.begin(), "h"), CapacityError);
});

Deno.test("capacity: a count is kept while the marks show no other create, and taken again once they do", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  for (let i = 0; i < MAX_ENTRIES - 2; i++) Deno.writeTextFileSync(`${dir}/f${i}.md`, "");
  const check = new CapacityCheck(dir);
  const other = new CreateMarks(dir);
  other.mark(); // the marks file exists, as in any store a create has written
  check.reserve(check.begin(), "a").linked(); // a pass: 1,022 entries, then a's own mark
  Deno.writeTextFileSync(`${dir}/a.md`, "");
  // A name made by hand, without a mark: the kept count does not see it (no directory pass)...
  Deno.writeTextFileSync(`${dir}/hand.md`, "");
  const b = check.reserve(check.begin(), "b");
  b.released();
  // ...until another create marks: then the next create counts again and finds the store full.
  other.mark();
  assert.throws(() => check.reserve(check.begin(), "c"), CapacityError);
  // A full count is taken again before it refuses: deletes leave no mark.
  Deno.removeSync(`${dir}/hand.md`);
  check.reserve(check.begin(), "d").released();
});

Deno.test("capacity: names made by hand are counted within REFRESH_MS", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  for (let i = 0; i < MAX_ENTRIES - 2; i++) Deno.writeTextFileSync(`${dir}/f${i}.md`, "");
  new CreateMarks(dir).mark();
  const check = new CapacityCheck(dir);
  check.reserve(check.begin(), "a").released();
  Deno.writeTextFileSync(`${dir}/h1.md`, "");
  Deno.writeTextFileSync(`${dir}/h2.md`, "");
  await new Promise((r) => setTimeout(r, REFRESH_MS + 50));
  assert.throws(() => check.reserve(check.begin(), "b"), CapacityError);
});

Deno.test("capacity: a marks file that grows past its bound is made anew, and counts are taken again", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  for (let i = 0; i < MAX_ENTRIES - 2; i++) Deno.writeTextFileSync(`${dir}/f${i}.md`, "");
  const marks = new CreateMarks(dir);
  marks.mark();
  const first = marks.look()!;
  Deno.writeFileSync(`${dir}/.creates`, new Uint8Array(MAX_MARK_BYTES), { append: true });
  assert.equal(marks.look(), undefined, "past the bound: removed");
  assert.throws(() => Deno.lstatSync(`${dir}/.creates`), Deno.errors.NotFound);
  marks.mark();
  const second = marks.look()!;
  assert.notEqual(second.id, first.id);
  assert.equal(second.size, 17, "16 bytes that name the file, then one mark");
  // A count kept across the new file is taken again.
  const check = new CapacityCheck(dir);
  check.reserve(check.begin(), "a").released();
  Deno.writeTextFileSync(`${dir}/h1.md`, "");
  Deno.writeTextFileSync(`${dir}/h2.md`, "");
  Deno.removeSync(`${dir}/.creates`);
  marks.mark();
  assert.throws(() => check.reserve(check.begin(), "b"), CapacityError);
});
