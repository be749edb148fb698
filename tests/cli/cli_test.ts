// The operator CLI's everyday commands, run as a separate process against a file store.

import assert from "node:assert/strict";
import { openFileStore } from "../../mod.ts";
import { cli, snapshotDir } from "../_lib/cli.ts";
import { tempDir } from "../_lib/temp_dir.ts";

Deno.test("cli write, read, list, delete round-trip on the default ./.agentmem directory", async () => {
  await using t = await tempDir();
  const cwd = t.path;
  const w = await cli(cwd, [
    "write",
    "greeting",
    "--description",
    "how: to greet",
    "--content",
    "Hi",
  ]);
  assert.deepEqual([w.code, w.stdout, w.stderr], [0, "created greeting\n", ""]);
  const read = await cli(cwd, ["read", "greeting", "--json"]);
  assert.equal(read.code, 0);
  assert.deepEqual(JSON.parse(read.stdout), {
    key: "greeting",
    description: "how: to greet",
    content: "Hi",
  });
  const human = await cli(cwd, ["read", "greeting"]);
  assert.equal(human.stdout, "description: how: to greet\n\nHi\n");
  const list = await cli(cwd, ["list"]);
  assert.equal(list.stdout, "greeting\thow: to greet\n");
  const listJson = await cli(cwd, ["list", "--json"]);
  assert.deepEqual(JSON.parse(listJson.stdout), {
    backend: "file",
    location: "",
    memories: [{ key: "greeting", description: "how: to greet" }],
  });
  const store = await openFileStore({ dir: `${cwd}/.agentmem` });
  assert.deepEqual(await store.read("greeting"), { description: "how: to greet", content: "Hi" });
  assert.equal((await cli(cwd, ["delete", "greeting"])).stdout, "deleted greeting\n");
  const again = await cli(cwd, ["delete", "greeting", "--json"]);
  assert.equal(again.code, 1);
  assert.deepEqual(JSON.parse(again.stdout), { key: "greeting", existed: false });
  assert.equal((await cli(cwd, ["list"])).stdout, "(no memories)\n");
});

Deno.test("cli write refuses an existing key unless --overwrite, taking the body from stdin", async () => {
  await using t = await tempDir();
  const cwd = t.path;
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
  const replaced = await cli(cwd, ["write", "k", "--description", "two", "--overwrite"], {
    stdin: "from stdin\n",
  });
  assert.deepEqual([replaced.code, replaced.stdout], [0, "replaced k\n"]);
  const store = await openFileStore({ dir: `${cwd}/.agentmem` });
  assert.deepEqual(await store.read("k"), { description: "two", content: "from stdin\n" });
});

Deno.test("cli write refuses a body that is not valid UTF-8 instead of replacing bytes", async () => {
  await using t = await tempDir();
  const cwd = t.path;
  await Deno.writeFile(`${cwd}/body`, new Uint8Array([0x68, 0x69, 0x0a, 0xff, 0x21]));
  const r = await cli(cwd, ["write", "k", "--description", "d", "--file", "body"]);
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    "agentmem: the file given by --file is not valid UTF-8 (line 2, byte 1); invalid text is refused, never replaced\n",
  );
  const piped = await cli(cwd, ["write", "k", "--description", "d"], {
    stdin: new Uint8Array([0xc3, 0x28]),
  });
  assert.equal(piped.code, 1);
  assert.match(piped.stderr, /standard input is not valid UTF-8/);
  assert.deepEqual(await (await openFileStore({ dir: `${cwd}/.agentmem` })).list(), []);
});

Deno.test("cli usage errors exit 2 in the CLI's own words, before any store is touched", async () => {
  await using t = await tempDir();
  const cwd = t.path;
  const cases: Array<[string[], string]> = [
    [[], "no command given"],
    [["frobnicate"], 'unknown command "frobnicate"'],
    [["read"], "read takes exactly one key"],
    [["list", "--bogus"], 'unknown option "--bogus"'],
    [["list", "-x"], 'unknown option "-x"'],
    [
      ["list", "--dir"],
      'option --dir needs a value (write --dir=VALUE for a value that starts with "--")',
    ],
    [["list", "--json=yes"], "option --json takes no value"],
    [["list", "--dir", "a", "--dir", "b"], "option --dir is given twice"],
    [["list", "--raw"], "list does not take --raw (only read, show do)"],
    [["write", "k", "--content", "no description"], "write needs --description"],
    [["read", "k", "--raw", "--dir", "x", "--dir=y"], "option --dir is given twice"],
    [["list", "--bucket", "b"], "--bucket, --prefix and --creds need --servers"],
    [["bucket"], "bucket needs a subcommand: init"],
    [["frob\u001b[2Jnicate"], 'unknown command "frob\\u001b[2Jnicate"'],
  ];
  for (const [args, message] of cases) {
    const r = await cli(cwd, args);
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(r.stdout, "", args.join(" "));
    assert.equal(r.stderr, `agentmem: ${message}\nagentmem: run with --help for usage\n`);
  }
  const json = await cli(cwd, ["list", "--bogus", "--json"]);
  assert.deepEqual(JSON.parse(json.stderr), {
    error: "usage",
    message: 'unknown option "--bogus"',
  });
  // None of these created the default directory.
  assert.deepEqual([...Deno.readDirSync(cwd)], []);
});

Deno.test("cli --config must hold a JSON object: null, an array or a string is a usage error", async () => {
  await using t = await tempDir();
  const cwd = t.path;
  for (const [text, what] of [["null", "null"], ["[1]", "an array"], ['"x"', "string"]] as const) {
    await Deno.writeTextFile(`${cwd}/c.json`, text);
    const r = await cli(cwd, ["list", "--config", "c.json"]);
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr,
      `agentmem: the --config file must hold a JSON object, not ${what}\nagentmem: run with --help for usage\n`,
    );
  }
  await Deno.writeTextFile(`${cwd}/c.json`, "{");
  assert.match((await cli(cwd, ["list", "--config", "c.json"])).stderr, /not valid JSON/);
  await Deno.mkdir(`${cwd}/m`);
  await Deno.writeTextFile(`${cwd}/c.json`, JSON.stringify({ options: { dir: "m" } }));
  const ok = await cli(cwd, ["list", "--config", "c.json"]);
  assert.deepEqual([ok.code, ok.stdout], [0, "(no memories)\n"]);
});

Deno.test("cli --version, --help and plurals", async () => {
  await using t = await tempDir();
  const cwd = t.path;
  const meta = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  const v = await cli(cwd, ["--version"]);
  assert.deepEqual([v.code, v.stdout, v.stderr], [0, `agentmem ${meta.version}\n`, ""]);
  const help = await cli(cwd, ["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /library's default prefix is the\s+run's\s+identity/);
  await cli(cwd, ["write", "one", "--description", "d", "--content", "c"]);
  const check = await cli(cwd, ["check"]);
  assert.equal(check.stdout, "file: 1 entry, 1 healthy, 0 problems\n");
  const exp = await cli(cwd, ["export"]);
  assert.equal(exp.stderr, "agentmem: exported 1 memory\n");
});

Deno.test("cli shows hostile stored text escaped; --raw gives the body byte for byte; --json stays exact", async () => {
  await using t = await tempDir();
  const cwd = t.path;
  const description = "clip \u202eevil\u2066 \u200b\u00ad\u{E0041} done";
  const content =
    "a\u001b]52;c;aGk=\u0007b\u001b[2J\u009b31m\r\nline2\ttab\u2028\u{E0041}\u{1F600}\n";
  const store = await openFileStore({ dir: `${cwd}/.agentmem` });
  await store.create("evil", description, content);
  const read = await cli(cwd, ["read", "evil"]);
  assert.equal(
    read.stdout,
    "description: clip \\u202eevil\\u2066 \\u200b\\u00ad\\u{e0041} done\n\n" +
      "a\\u001b]52;c;aGk=\\u0007b\\u001b[2J\\u009b31m\\u000d\nline2\ttab\\u2028\\u{e0041}\u{1F600}\n",
  );
  const list = await cli(cwd, ["list"]);
  assert.equal(list.stdout, "evil\tclip \\u202eevil\\u2066 \\u200b\\u00ad\\u{e0041} done\n");
  for (const r of [read, list]) {
    // Nothing a terminal would act on reaches stdout.
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(r.stdout, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e\u2066\u200b]/);
  }
  const raw = await cli(cwd, ["read", "evil", "--raw"]);
  assert.deepEqual(raw.stdoutBytes, new TextEncoder().encode(content));
  const json = await cli(cwd, ["read", "evil", "--json"]);
  assert.deepEqual(JSON.parse(json.stdout), { key: "evil", description, content });
  assert.doesNotMatch(
    json.stdout.trimEnd(),
    // deno-lint-ignore no-control-regex
    /[\u0000-\u001f\u007f-\u009f\u202e\u2066\u200b\u2028]/,
  );
});

Deno.test("cli --read-only never creates or writes: a missing directory is exit 1, stale temps stay", async () => {
  await using t = await tempDir();
  const cwd = t.path;
  for (const cmd of ["list", "info", "check", "export", "read"]) {
    const args = cmd === "read" ? [cmd, "k"] : [cmd];
    const r = await cli(cwd, [...args, "--read-only", "--dir", "./typo"]);
    assert.equal(r.code, 1, cmd);
    assert.equal(
      r.stderr,
      "agentmem: Cannot open the memory directory given by --dir: it does not exist\n",
    );
  }
  assert.deepEqual([...Deno.readDirSync(cwd)], []);
  // A temp file a killed writer left two hours ago: the library sweeps it on open; read-only not.
  await cli(cwd, ["write", "k", "--description", "d", "--content", "c"]);
  const temp = `${cwd}/.agentmem/.k.0123456789abcdef.tmp`;
  await Deno.writeTextFile(temp, "partial");
  const old = new Date(Date.now() - 2 * 3600_000);
  await Deno.utime(temp, old, old);
  const before = await snapshotDir(`${cwd}/.agentmem`);
  for (
    const args of [["list"], ["read", "k"], ["check"], ["export"], ["info"], [
      "import",
      "--dry-run",
    ]]
  ) {
    const r = await cli(cwd, [...args, "--read-only"], { stdin: "" });
    assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
  }
  for (
    const args of [
      ["write", "k2", "--description", "d", "--content", "c"],
      ["delete", "k"],
      ["write", "k", "--description", "d", "--content", "c", "--overwrite"],
    ]
  ) {
    const r = await cli(cwd, [...args, "--read-only", "--json"]);
    assert.equal(r.code, 1);
    assert.equal(JSON.parse(r.stderr).error, "read_only");
  }
  const imp = await cli(cwd, ["import", "--read-only"], { stdin: "" });
  assert.equal(imp.code, 2);
  assert.deepEqual(await snapshotDir(`${cwd}/.agentmem`), before);
});

Deno.test("cli commands other than write and import need the directory to exist", async () => {
  await using t = await tempDir();
  const cwd = t.path;
  const r = await cli(cwd, ["list", "--dir", "nope"]);
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    "agentmem: Cannot open the memory directory given by --dir: it does not exist (only write and import create it)\n",
  );
  await Deno.writeTextFile(`${cwd}/notadir`, "");
  const notDir = await cli(cwd, ["list", "--dir", `${cwd}/notadir`]);
  assert.equal(notDir.code, 1);
  assert.ok(!notDir.stderr.includes(cwd), notDir.stderr);
  assert.deepEqual([...Deno.readDirSync(cwd)].map((e) => e.name), ["notadir"]);
  const bad = await cli(cwd, ["write", "../etc/passwd", "--description", "d", "--content", "c"]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^agentmem: Invalid memory key "..\/etc\/passwd"/);
});
