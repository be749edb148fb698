// The CLI's everyday help for an operator: info on a file store says where it is (the directory
// the operator named), how many entries it holds and whether history is kept, while the store's
// own info().location stays ""; list says how many entries it hid and points to check; and an
// unknown command or option suggests the nearest one.

import assert from "node:assert/strict";
import { openFileStore } from "../../mod.ts";
import { cli } from "../_lib/cli.ts";
import { tempDir } from "../_lib/temp_dir.ts";

async function damagedStore(cwd: string): Promise<void> {
  const w = await cli(cwd, ["write", "a", "--description", "Alpha", "--content", "x"]);
  assert.equal(w.code, 0, w.stderr);
  await Deno.writeTextFile(`${cwd}/.agentmem/bad.md`, "no header here");
  await Deno.writeTextFile(`${cwd}/.agentmem/white space.md`, "---\ndescription: x\n---\n");
}

Deno.test("cli info on a file store names the directory, the entries and history; location stays empty", async () => {
  await using t = await tempDir();
  await damagedStore(t.path);
  const human = await cli(t.path, ["info"]);
  assert.equal(human.code, 0, human.stderr);
  assert.equal(
    human.stdout,
    "backend: file\ndirectory: ./.agentmem\n" +
      'entries: 1 listed (2 more entries are in the store but not listed: damaged, or names that are not a legal key; run "agentmem check" to see them)\n' +
      "history: on (at least the last 64 versions of every key, and every version younger than 30 days; agentmem history <key> shows them)\n",
  );
  assert.doesNotMatch(human.stdout, /\(none\)/);
  const json = await cli(t.path, ["info", "--json", "--dir", ".agentmem"]);
  assert.deepEqual(JSON.parse(json.stdout), {
    backend: "file",
    location: "",
    directory: ".agentmem",
    entries: 1,
    hidden: 2,
    history: { versions: 64, days: 30 },
  });
  // What a --config file asks for is what info reports; off says so.
  for (const [history, shown] of [[false, false], [{ versions: 5 }, { versions: 5, days: 30 }]]) {
    const config = `${t.path}/config.json`;
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        backend: "file",
        options: { dir: `${t.path}/h${shown ? "on" : "off"}`, history },
      }),
    );
    await cli(t.path, ["write", "k", "--description", "K", "--content", "c", "--config", config]);
    const r = JSON.parse((await cli(t.path, ["info", "--json", "--config", config])).stdout);
    assert.deepEqual(r.history, shown, JSON.stringify(history));
  }
  // The backend itself still reports no location, as the seed requires.
  assert.deepEqual((await openFileStore({ dir: `${t.path}/.agentmem` })).info(), {
    backend: "file",
    location: "",
  });
});

Deno.test("cli list says how many entries it hid and points to check", async () => {
  await using t = await tempDir();
  await damagedStore(t.path);
  const human = await cli(t.path, ["list"]);
  assert.equal(human.code, 0);
  assert.equal(
    human.stdout,
    "a\tAlpha\n" +
      '(2 more entries are in the store but not listed: damaged, or names that are not a legal key; run "agentmem check" to see them)\n',
  );
  const json = JSON.parse((await cli(t.path, ["list", "--json"])).stdout);
  assert.equal(json.hidden, 2);
  // A healthy store says nothing more.
  await Deno.remove(`${t.path}/.agentmem/bad.md`);
  await Deno.remove(`${t.path}/.agentmem/white space.md`);
  assert.equal((await cli(t.path, ["list"])).stdout, "a\tAlpha\n");
  const check = await cli(t.path, ["check"]);
  assert.equal(check.code, 0);
});

Deno.test("cli suggests the nearest command or option for a typo, and nothing for a word far from all", async () => {
  await using t = await tempDir();
  const cases: Array<[string[], string]> = [
    [["lsit"], 'unknown command "lsit" (did you mean "list"?)'],
    [["chekc"], 'unknown command "chekc" (did you mean "check"?)'],
    [["exprot"], 'unknown command "exprot" (did you mean "export"?)'],
    [["bucket", "int"], 'unknown bucket subcommand "int" (did you mean "bucket init"?)'],
    [["list", "--dri", "x"], 'unknown option "--dri" (did you mean --dir?)'],
    [["list", "--josn"], 'unknown option "--josn" (did you mean --json?)'],
    [
      ["write", "k", "--descripton", "d"],
      'unknown option "--descripton" (did you mean --description?)',
    ],
    [["frobnicate"], 'unknown command "frobnicate"'],
  ];
  for (const [args, message] of cases) {
    const r = await cli(t.path, args);
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(r.stderr, `agentmem: ${message}\nagentmem: run with --help for usage\n`);
  }
  assert.deepEqual([...Deno.readDirSync(t.path)], []);
});
