// The operator CLI's check and export on a file store: every name in the directory is seen,
// including those list() hides, and export never stops early.

import assert from "node:assert/strict";
import { openFileStore, type Store } from "../../mod.ts";
import { cli, expectCli, HOSTILE } from "../_lib/cli.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { entryOf } from "../_lib/memory_file.ts";

const ENC = new TextEncoder();

// A store with two healthy entries and every kind of damage an operator can meet.
async function damagedStore(dir: string): Promise<Store> {
  const store = await openFileStore({ dir });
  await store.create("a.ok", "first", "1");
  await store.create("z.ok", "last", "2");
  await Deno.writeTextFile(`${dir}/bad-header.md`, "---\ndescription: [unclosed\n---\nbody");
  await Deno.writeFile(
    `${dir}/bad-body.md`,
    new Uint8Array([...ENC.encode("---\ndescription: d\n---\n"), 0xff, 0xfe]),
  );
  await Deno.writeTextFile(`${dir}/bad name.md`, "---\ndescription: planted\n---\nx");
  await Deno.writeTextFile(`${dir}/evil\u001b[2J.md`, "---\ndescription: planted\n---\nx");
  await Deno.mkdir(`${dir}/a-dir.md`);
  await Deno.symlink(`${dir}/a.ok.md`, `${dir}/a-link.md`);
  await Deno.writeTextFile(`${dir}/notes.txt`, "not a memory");
  return store;
}

Deno.test("cli check reports every damaged or planted name list() hides, by name, and exits 1", async () => {
  await using t = await tempDir();
  const dir = `${t.path}/m`;
  const store = await damagedStore(dir);
  // What list() shows: the healthy ones and the valid header over a damaged body.
  assert.deepEqual((await store.list()).map((i) => i.key), ["a.ok", "bad-body", "z.ok"]);
  const human = await cli(t.path, ["check", "--dir", "m"]);
  expectCli(human, {
    code: 1,
    stdout: [
      "file: 8 entries, 2 healthy, 6 problems",
      '  "a-dir": not a memory file: it is a directory, not a memory file; the backend never follows or lists it',
      '  "a-link": not a memory file: it is a symbolic link, not a memory file; the backend never follows or lists it',
      '  "bad name.md": illegal name: the name is not a legal key: it contains " "; a key is 1 to 200 characters from A-Z a-z 0-9 . _ = -, not starting or ending with "." and without ".."',
      '  "bad-body": damaged: it is not valid UTF-8',
      '  "bad-header": damaged: its header is not valid YAML',
      '  "evil\\u001b[2J.md": illegal name: the name is not a legal key: it contains "\\u001b"; a key is 1 to 200 characters from A-Z a-z 0-9 . _ = -, not starting or ending with "." and without ".."',
      '  (1 other name ignored, never memories: "notes.txt")',
      "",
    ],
    stderr: "",
  });
  const json = await cli(t.path, ["check", "--dir", "m", "--json"]);
  assert.equal(json.code, 1);
  const report = JSON.parse(json.stdout);
  assert.equal(report.entries, 8);
  assert.equal(report.healthy, 2);
  assert.deepEqual(
    report.problems.map((p: { name: string; error: string }) => [p.name, p.error]),
    [
      ["a-dir", "not_a_file"],
      ["a-link", "not_a_file"],
      ["bad name.md", "illegal_name"],
      ["bad-body", "corrupt"],
      ["bad-header", "corrupt"],
      ["evil\u001b[2J.md", "illegal_name"],
    ],
  );
  assert.deepEqual(report.ignored, ["notes.txt"]);
  // The same through the read-only reader, which writes nothing.
  const ro = await cli(t.path, ["check", "--dir", "m", "--read-only"]);
  assert.deepEqual([ro.code, ro.stdout], [1, human.stdout]);
  // A healthy store passes.
  const clean = await cli(t.path, ["check", "--dir", "m2"]);
  assert.equal(clean.code, 1); // missing directory
  await openFileStore({ dir: `${t.path}/m2` });
  const empty = await cli(t.path, ["check", "--dir", "m2"]);
  assert.deepEqual([empty.code, empty.stdout], [0, "file: 0 entries, 0 healthy, 0 problems\n"]);
});

Deno.test("cli export writes every readable entry past damaged ones, names each left out, exits 1", async () => {
  await using t = await tempDir();
  const dir = `${t.path}/m`;
  await damagedStore(dir);
  const r = await cli(t.path, ["export", "--dir", "m"]);
  expectCli(r, {
    code: 1,
    stdout: [
      '{"format":"agentmem-dump","version":1}',
      '{"key":"a.ok","description":"first","content":"1"}',
      '{"key":"z.ok","description":"last","content":"2"}',
      '{"format":"agentmem-dump","end":true,"records":2,"skipped":6}',
      "",
    ],
  });
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 7);
  assert.equal(lines[3], 'agentmem: not exported: "bad-body": damaged: it is not valid UTF-8');
  assert.equal(lines[6], "agentmem: exported 2 memories; 6 entries left out");
  const json = await cli(t.path, ["export", "--dir", "m", "--json"]);
  assert.equal(json.stdout, r.stdout);
  const errors = json.stderr.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.equal(errors.length, 6);
  assert.deepEqual(errors[3], {
    error: "corrupt",
    name: "bad-body",
    message: "Not exported: it is not valid UTF-8",
  });
});

Deno.test("cli export then import moves hostile and 64 KiB entries exactly to another file store", async () => {
  await using t = await tempDir();
  const src = await openFileStore({ dir: `${t.path}/a` });
  for (const [k, d, c] of HOSTILE) await src.create(k, d, c);
  const dump = await cli(t.path, ["export", "--dir", "a"]);
  assert.equal(dump.code, 0);
  assert.equal(dump.stdout.trimEnd().split("\n").length, HOSTILE.length + 2);
  const imported = await cli(t.path, ["import", "--dir", "b", "--json"], { stdin: dump.stdout });
  assert.equal(imported.code, 0, imported.stderr);
  assert.deepEqual(JSON.parse(imported.stdout).created, HOSTILE.map(([k]) => k).sort());
  const dst = await openFileStore({ dir: `${t.path}/b` });
  for (const [k] of HOSTILE) assert.deepEqual(await dst.read(k), await src.read(k));
  // Byte for byte: the entries are identical (the version record in front of each says when and
  // how each store got it).
  for (const [k] of HOSTILE) {
    assert.deepEqual(
      entryOf(await Deno.readFile(`${t.path}/b/${k}.md`)),
      entryOf(await Deno.readFile(`${t.path}/a/${k}.md`)),
    );
  }
  // The second dump equals the first.
  assert.equal((await cli(t.path, ["export", "--dir", "b"])).stdout, dump.stdout);
});
