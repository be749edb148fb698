// The operator CLI's import on a file store: the whole input is checked before anything is
// written, conflicts are reported key by key, and a failure mid-way says what landed.

import assert from "node:assert/strict";
import { MAX_CONTENT_BYTES, MAX_ENTRIES, openFileStore } from "../../mod.ts";
import { cli, expectCli, snapshotDir } from "../_lib/cli.ts";
import { tempDir } from "../_lib/temp_dir.ts";

const ENC = new TextEncoder();
const rec = (key: unknown, description: unknown = "d", content: unknown = "c") =>
  JSON.stringify({ key, description, content });
const HEADER = '{"format":"agentmem-dump","version":1}';
const trailer = (n: number) => `{"format":"agentmem-dump","end":true,"records":${n},"skipped":0}`;

Deno.test("cli import checks the whole input first and writes nothing when any record is bad", async () => {
  await using t = await tempDir();
  const bytes = new Uint8Array([
    ...ENC.encode(
      [
        rec("good"),
        "not json",
        rec("../evil"),
        rec("bad-desc", "\u0007"),
        rec("big", "d", "x".repeat(MAX_CONTENT_BYTES + 1)),
        rec("good"),
        JSON.stringify({ key: "k", description: "d", content: "c", extra: 1 }),
        rec("lone", "d", "\ud800"),
        "[1]",
        "",
      ].join("\n"),
    ),
    ...ENC.encode('{"key":"utf8","description":"d","content":"'),
    0xff,
    ...ENC.encode('"}\n'),
    ...ENC.encode(rec("after")),
  ]);
  const r = await cli(t.path, ["import"], { stdin: bytes });
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.equal(
    r.stderr,
    [
      "line 2: not a JSON value",
      'line 3: Invalid memory key "../evil": it contains "/"; a key is 1 to 200 characters from A-Z a-z 0-9 . _ = -, not starting or ending with "." and without ".."',
      'line 4: Invalid description of memory "bad-desc": it contains the control character "\\u0007"; a description is one line of at most 500 characters without control characters',
      'line 5: Content of memory "big" is too large: 65537 bytes of UTF-8, over the limit of 65536 bytes (64 KiB)',
      'line 6: key "good" already appears on line 1; a dump holds a key once',
      'line 7: unknown field "extra"; a record has "key", "description" and "content"',
      'line 8: Invalid content of memory "lone": it contains a lone surrogate; content must be valid Unicode text',
      "line 9: a record must be a JSON object",
      "line 10: not valid UTF-8 (invalid text is refused, never replaced)",
      "nothing imported (9 bad lines)",
      "",
    ].map((l) => l === "" ? "" : `agentmem: ${l}`).join("\n"),
  );
  // Not even the directory was created.
  assert.deepEqual([...Deno.readDirSync(t.path)], []);
  const json = await cli(t.path, ["import", "--json", "--overwrite"], { stdin: bytes });
  assert.equal(json.code, 1);
  const report = JSON.parse(json.stdout);
  assert.equal(report.written, false);
  assert.deepEqual(report.problems.map((p: { line: number }) => p.line), [
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    9,
    10,
  ]);
});

Deno.test("cli import refuses a truncated dump, an unknown version and a wrong count", async () => {
  await using t = await tempDir();
  const cases: Array<[string, string]> = [
    [
      [HEADER, rec("a")].join("\n"),
      "line 3: the dump ends without its trailer line, so it is truncated",
    ],
    [
      ['{"format":"agentmem-dump","version":2}', rec("a"), trailer(1)].join("\n"),
      "line 1: dump version 2 is not supported; this CLI reads version 1",
    ],
    [
      [HEADER, rec("a"), trailer(2)].join("\n"),
      "line 3: the trailer counts 2 records but the dump holds 1",
    ],
    [
      [HEADER, rec("a"), HEADER, trailer(2)].join("\n"),
      "line 3: a header or trailer line in the middle of the dump",
    ],
  ];
  for (const [input, message] of cases) {
    const r = await cli(t.path, ["import"], { stdin: input });
    assert.equal(r.code, 1);
    assert.equal(r.stderr.split("\n")[0], `agentmem: ${message}`);
    assert.match(r.stderr, /nothing imported/);
  }
  assert.deepEqual([...Deno.readDirSync(t.path)], []);
  // Bare record lines, with no header and no trailer, are accepted.
  const bare = await cli(t.path, ["import"], { stdin: `${rec("a")}\n${rec("b")}\n` });
  assert.deepEqual([bare.code, bare.stdout], [
    0,
    "created a\ncreated b\nimported: 2 created, 0 replaced, 0 unchanged, 0 skipped\n",
  ]);
});

Deno.test("cli import reports conflicts key by key: unchanged, skipped, --overwrite replaced; --dry-run writes nothing", async () => {
  await using t = await tempDir();
  const dir = `${t.path}/.agentmem`;
  const store = await openFileStore({ dir });
  await store.create("same", "d", "c");
  await store.create("differs", "old", "old body");
  await Deno.writeTextFile(`${dir}/damaged.md`, "no header at all");
  const dump = [
    HEADER,
    rec("same"),
    rec("differs", "new", "new body"),
    rec("damaged"),
    rec("fresh"),
    trailer(4),
  ]
    .join("\n");

  const before = await snapshotDir(dir);
  const dry = await cli(t.path, ["import", "--dry-run"], { stdin: dump });
  expectCli(dry, {
    code: 1,
    stdout: [
      "unchanged same (identical)",
      "would create fresh",
      "skipped differs: it holds a different memory; --overwrite replaces it",
      "skipped damaged: the stored entry is damaged; --overwrite replaces it",
      "dry run, nothing written: would import: 1 to create, 0 to replace, 1 unchanged, 2 skipped",
      "",
    ],
  });
  assert.deepEqual(await snapshotDir(dir), before);

  const plain = await cli(t.path, ["import", "--json"], { stdin: dump });
  assert.equal(plain.code, 1);
  assert.deepEqual(JSON.parse(plain.stdout), {
    dryRun: false,
    created: ["fresh"],
    replaced: [],
    unchanged: ["same"],
    skipped: [
      { key: "differs", reason: "it holds a different memory; --overwrite replaces it" },
      { key: "damaged", reason: "the stored entry is damaged; --overwrite replaces it" },
    ],
    failed: null,
    uncertain: [],
    notWritten: [],
  });
  assert.deepEqual(await store.read("differs"), { description: "old", content: "old body" });

  const over = await cli(t.path, ["import", "--overwrite"], { stdin: dump });
  assert.equal(over.code, 0, over.stderr);
  assert.equal(
    over.stdout,
    [
      "unchanged same (identical)",
      "replaced differs",
      "replaced damaged",
      "unchanged fresh (identical)",
      "imported: 0 created, 2 replaced, 2 unchanged, 0 skipped",
      "",
    ].join("\n"),
  );
  assert.deepEqual(await store.read("differs"), { description: "new", content: "new body" });
  assert.deepEqual(await store.read("damaged"), { description: "d", content: "c" });
  const again = await cli(t.path, ["import"], { stdin: dump });
  assert.equal(again.code, 0);
  assert.equal(
    again.stdout.split("\n").at(-2),
    "imported: 0 created, 0 replaced, 4 unchanged, 0 skipped",
  );
});

Deno.test("cli import refuses a dump that would take the store over capacity, writing nothing", async () => {
  await using t = await tempDir();
  const dir = `${t.path}/.agentmem`;
  const store = await openFileStore({ dir, durable: false });
  for (let i = 0; i < MAX_ENTRIES - 2; i++) await store.create(`k${i}`, "d", "c");
  const dump = [rec("k0"), rec("n1"), rec("n2"), rec("n3")].join("\n");
  const r = await cli(t.path, ["import"], { stdin: dump });
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    "agentmem: the store holds 1022 memories and the dump would add 3, over the limit of 1024\nagentmem: nothing imported (capacity)\n",
  );
  assert.equal((await store.list()).length, MAX_ENTRIES - 2);
  const fits = await cli(t.path, ["import"], {
    stdin: [rec("k0"), rec("n1"), rec("n2")].join("\n"),
  });
  assert.equal(fits.code, 0, fits.stderr);
  assert.equal((await store.list()).length, MAX_ENTRIES);
});

Deno.test("cli import that fails mid-way says exactly which keys landed and which did not", async () => {
  await using t = await tempDir();
  const dir = `${t.path}/.agentmem`;
  await openFileStore({ dir });
  // A directory under k3's file name: a conflict (skipped), and with --overwrite a replacement
  // the backend refuses to make, so the import fails there.
  await Deno.mkdir(`${dir}/k3.md`);
  const dump = [HEADER, rec("k1"), rec("k2"), rec("k3"), rec("k4"), trailer(4)].join("\n");
  const dry = await cli(t.path, ["import", "--dry-run"], { stdin: dump });
  assert.match(dry.stdout, /skipped k3: the stored entry is damaged; --overwrite replaces it/);
  const r = await cli(t.path, ["import", "--overwrite"], { stdin: dump });
  assert.equal(r.code, 1);
  assert.equal(
    r.stdout,
    "created k1\ncreated k2\nimported: 2 created, 0 replaced, 0 unchanged, 0 skipped\n",
  );
  const lines = r.stderr.trimEnd().split("\n");
  assert.match(
    lines[0] as string,
    /^agentmem: import stopped at line 4, key "k3": \[memory:file\] Cannot create memory "k3"/,
  );
  assert.deepEqual(lines.slice(1), [
    "agentmem: landed before the failure (2): k1, k2",
    "agentmem: not written (2): k3, k4",
  ]);
  const store = await openFileStore({ dir });
  assert.deepEqual((await store.list()).map((i) => i.key), ["k1", "k2"]);
  const json = await cli(t.path, ["import", "--json", "--overwrite"], {
    stdin: [rec("k5"), rec("k3"), rec("k6")].join("\n"),
  });
  const report = JSON.parse(json.stdout);
  assert.deepEqual(
    [report.created, report.failed.key, report.failed.error, report.notWritten],
    [["k5"], "k3", "unavailable", ["k3", "k6"]],
  );
});

Deno.test("cli import --dry-run into a directory that does not exist plans creates and creates nothing", async () => {
  await using t = await tempDir();
  const r = await cli(t.path, ["import", "--dry-run", "--dir", "new"], {
    stdin: [rec("a"), rec("b")].join("\n"),
  });
  assert.equal(r.code, 0);
  assert.equal(
    r.stdout,
    "would create a\nwould create b\ndry run, nothing written: would import: 2 to create, 0 to replace, 0 unchanged, 0 skipped\n",
  );
  assert.equal(
    r.stderr,
    "agentmem: note: the memory directory does not exist yet; the import will create it\n",
  );
  assert.deepEqual([...Deno.readDirSync(t.path)], []);
});
