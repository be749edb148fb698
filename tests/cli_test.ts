import assert from "node:assert/strict";
import { openFileStore } from "../mod.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;

async function cli(
  cwd: string,
  args: string[],
  stdin?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", CLI, ...args],
    cwd,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("cli write, read, list, delete round-trip on the default ./.agentmem directory", async () => {
  const cwd = await Deno.makeTempDir();
  try {
    assert.equal(
      (await cli(cwd, ["write", "greeting", "--description", "how: to greet", "--content", "Hi"]))
        .code,
      0,
    );
    const read = await cli(cwd, ["read", "greeting", "--json"]);
    assert.equal(read.code, 0);
    assert.deepEqual(JSON.parse(read.stdout), {
      key: "greeting",
      description: "how: to greet",
      content: "Hi",
    });
    const list = await cli(cwd, ["list"]);
    assert.equal(list.stdout, "greeting\thow: to greet\n");
    const store = await openFileStore({ dir: `${cwd}/.agentmem` });
    assert.deepEqual(await store.read("greeting"), { description: "how: to greet", content: "Hi" });
    assert.equal((await cli(cwd, ["delete", "greeting"])).code, 0);
    const again = await cli(cwd, ["delete", "greeting", "--json"]);
    assert.equal(again.code, 1);
    assert.deepEqual(JSON.parse(again.stdout), { key: "greeting", existed: false });
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("cli write refuses an existing key unless --overwrite, taking the body from stdin", async () => {
  const cwd = await Deno.makeTempDir();
  try {
    await cli(cwd, ["write", "k", "--description", "one", "--content", "1"]);
    const refused = await cli(cwd, [
      "write",
      "k",
      "--description",
      "two",
      "--content",
      "2",
      "--json",
    ]);
    assert.equal(refused.code, 1);
    assert.equal(JSON.parse(refused.stderr).error, "exists");
    const replaced = await cli(
      cwd,
      ["write", "k", "--description", "two", "--overwrite"],
      "from stdin\n",
    );
    assert.equal(replaced.code, 0);
    assert.match(replaced.stdout, /replaced k/);
    const store = await openFileStore({ dir: `${cwd}/.agentmem` });
    assert.deepEqual(await store.read("k"), { description: "two", content: "from stdin\n" });
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("cli export then import moves every entry unchanged to another store", async () => {
  const cwd = await Deno.makeTempDir();
  try {
    const src = await openFileStore({ dir: `${cwd}/a` });
    await src.create("x", 'quote "and" colon: yes', "---\nlooks like a header\n---\n");
    await src.create("y", "emoji \u{1F600}", "\u2028line\r\n");
    const dump = await cli(cwd, ["export", "--dir", "a"]);
    assert.equal(dump.code, 0);
    assert.equal(dump.stdout.trim().split("\n").length, 2);
    const imported = await cli(cwd, ["import", "--dir", "b", "--json"], dump.stdout);
    assert.equal(imported.code, 0);
    assert.deepEqual(JSON.parse(imported.stdout), {
      created: 2,
      replaced: 0,
      skipped: 0,
      failed: 0,
    });
    const dst = await openFileStore({ dir: `${cwd}/b` });
    for (const key of ["x", "y"]) assert.deepEqual(await dst.read(key), await src.read(key));
    const twice = await cli(cwd, ["import", "--dir", "b", "--json"], dump.stdout);
    assert.deepEqual(JSON.parse(twice.stdout), { created: 0, replaced: 0, skipped: 2, failed: 0 });
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("cli import reports bad lines and writes only the valid ones", async () => {
  const cwd = await Deno.makeTempDir();
  try {
    const lines = [
      JSON.stringify({ key: "good", description: "d", content: "c" }),
      "not json",
      JSON.stringify({ key: "../evil", description: "d", content: "c" }),
      JSON.stringify({ key: "bad-desc", description: "\u0007", content: "c" }),
    ].join("\n");
    const result = await cli(cwd, ["import", "--json"], lines);
    assert.equal(result.code, 1);
    assert.deepEqual(JSON.parse(result.stdout), { created: 1, replaced: 0, skipped: 0, failed: 3 });
    assert.match(result.stderr, /line 3: Invalid memory key/);
    const store = await openFileStore({ dir: `${cwd}/.agentmem` });
    assert.deepEqual(await store.list(), [{ key: "good", description: "d" }]);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("cli refuses usage errors with exit 2 and illegal keys with exit 1, printing no paths", async () => {
  const cwd = await Deno.makeTempDir();
  try {
    assert.equal((await cli(cwd, [])).code, 2);
    assert.equal((await cli(cwd, ["frobnicate"])).code, 2);
    assert.equal((await cli(cwd, ["read"])).code, 2);
    assert.equal((await cli(cwd, ["list", "--bogus"])).code, 2);
    assert.equal((await cli(cwd, ["write", "k", "--content", "no description"])).code, 2);
    const bad = await cli(cwd, ["read", "../etc/passwd"]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /Invalid memory key/);
    await Deno.writeTextFile(`${cwd}/notadir`, "");
    const notDir = await cli(cwd, ["list", "--dir", `${cwd}/notadir`]);
    assert.equal(notDir.code, 1);
    assert.ok(!notDir.stderr.includes(cwd), notDir.stderr);
    assert.equal((await cli(cwd, ["--help"])).code, 0);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("cli --read-only refuses writes and deletes", async () => {
  const cwd = await Deno.makeTempDir();
  try {
    await cli(cwd, ["write", "k", "--description", "d", "--content", "c"]);
    const w = await cli(cwd, [
      "write",
      "k2",
      "--description",
      "d",
      "--content",
      "c",
      "--read-only",
      "--json",
    ]);
    assert.equal(w.code, 1);
    assert.equal(JSON.parse(w.stderr).error, "read_only");
    assert.equal((await cli(cwd, ["delete", "k", "--read-only"])).code, 1);
    assert.equal((await cli(cwd, ["read", "k", "--read-only"])).code, 0);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("cli check reads every entry and reports the unreadable ones", async () => {
  const cwd = await Deno.makeTempDir();
  try {
    await cli(cwd, ["write", "ok", "--description", "d", "--content", "c"]);
    await cli(cwd, ["write", "broken", "--description", "d", "--content", "c"]);
    // A valid header over a body that is not UTF-8: listed, but unreadable.
    const bytes = new TextEncoder().encode("---\ndescription: d\n---\n");
    await Deno.writeFile(`${cwd}/.agentmem/broken.md`, new Uint8Array([...bytes, 0xff, 0xfe]));
    const result = await cli(cwd, ["check", "--json"]);
    assert.equal(result.code, 1);
    const report = JSON.parse(result.stdout);
    assert.equal(report.entries, 2);
    assert.deepEqual(report.problems.map((p: { key: string }) => p.key), ["broken"]);
    assert.equal(report.problems[0].error, "corrupt");
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});
