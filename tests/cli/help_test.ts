// The CLI helps itself: each command's own --help (usage, options, an example), suggestions for
// commands, subcommands and options, and every example the help prints runs as printed.

import assert from "node:assert/strict";
import { cli } from "../_lib/cli.ts";
import { agentmemShell } from "../_lib/agentmem_shell.ts";
import { needsNats, startNatsServer } from "../_lib/nats_server.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { openFileStore, proposals, Scope } from "../../mod.ts";

// A write a tainted run made through a store that holds such writes for review: the <id> the
// review examples (review show, approve, reject) name.
async function heldProposal(cwd: string, n: number): Promise<string> {
  const store = await openFileStore({ dir: `${cwd}/.agentmem`, review: "tainted" });
  await store.create(`held.${n}`, "A held write", "held", { scope: new Scope({ tainted: true }) });
  return (await proposals(store, { key: `held.${n}` }))[0]!.id;
}

// The command names `agentmem --help` lists, in its order.
async function commandNames(cwd: string): Promise<string[]> {
  const help = (await cli(cwd, ["--help"])).stdout;
  const section = help.slice(
    help.indexOf("Commands:\n"),
    help.indexOf("\n\n", help.indexOf("Commands:")),
  );
  return [...section.matchAll(/^ {2}([a-z]+(?: [a-z]+)*)(?= |$)/gm)].map((m) => m[1]!);
}

// The examples a command's help prints.
function examplesOf(help: string): string[] {
  const at = help.search(/^Examples?:$/m);
  assert.ok(at >= 0, `no example in:\n${help}`);
  return help.slice(at).split("\n").slice(1).filter((l) => l.startsWith("  agentmem "))
    .map((l) => l.trim());
}

Deno.test("cli <command> --help prints that command's usage, its options and an example; help <command> is the same", async () => {
  await using t = await tempDir();
  const names = await commandNames(t.path);
  assert.ok(names.includes("log") && names.includes("bucket init"), names.join(", "));
  const overview = (await cli(t.path, ["--help"])).stdout;
  for (const name of names) {
    const words = name.split(" ");
    const r = await cli(t.path, [...words, "--help"]);
    assert.equal(r.code, 0, name);
    assert.ok(r.stdout.startsWith(`agentmem ${name}: `), r.stdout);
    assert.match(r.stdout, new RegExp(`\nUsage: agentmem ${name}\\b`));
    assert.notEqual(r.stdout, overview);
    assert.ok(examplesOf(r.stdout).every((e) => e.startsWith(`agentmem ${name}`)), name);
    assert.equal((await cli(t.path, ["help", ...words])).stdout, r.stdout, name);
    assert.equal((await cli(t.path, [...words, "-h"])).stdout, r.stdout, name);
  }
  // A command's own options are in its help, and another command's are not.
  const log = (await cli(t.path, ["log", "--help"])).stdout;
  assert.match(log, /--reverse +oldest first/);
  assert.match(log, /--limit <n> +at most this many versions, the newest/);
  assert.doesNotMatch(log, /--overwrite/);
  const write = (await cli(t.path, ["write", "--help"])).stdout;
  assert.match(write, /--description <text> +the one-line description \(required\)/);
  assert.match((await cli(t.path, ["bucket", "init", "--help"])).stdout, /Connecting to NATS:/);
  assert.equal((await cli(t.path, ["help"])).stdout, overview);
  assert.match(overview, /agentmem <command> --help +that command's usage/);
  assert.deepEqual([...Deno.readDirSync(t.path)], []);
});

Deno.test("cli suggests the command, subcommand or option meant, by spelling, shortening or another word for it", async () => {
  await using t = await tempDir();
  const cases: Array<[string[], string]> = [
    [["bucket", "create"], 'unknown bucket subcommand "create" (did you mean "bucket init"?)'],
    [["bucket", "int"], 'unknown bucket subcommand "int" (did you mean "bucket init"?)'],
    [["init"], 'unknown command "init" (did you mean "bucket init"?)'],
    [["ls"], 'unknown command "ls" (did you mean "list"?)'],
    [["rm", "k"], 'unknown command "rm" (did you mean "delete"?)'],
    [["undo"], 'unknown command "undo" (did you mean "revert"?)'],
    [["import", "--dry"], 'unknown option "--dry" (did you mean --dry-run?)'],
    [["revert", "--run", "r", "--dry"], 'unknown option "--dry" (did you mean --dry-run?)'],
    [["--dry", "import"], 'unknown option "--dry" (did you mean --dry-run?)'],
    [["log", "--revers"], 'unknown option "--revers" (did you mean --reverse?)'],
    [["log", "--lim", "3"], 'unknown option "--lim" (did you mean --limit?)'],
    [["list", "--no-hist"], 'unknown option "--no-hist" (did you mean --no-history?)'],
    // The command's own options first: --dir for list, not --dry-run.
    [["list", "--dri", "x"], 'unknown option "--dri" (did you mean --dir?)'],
    [["list", "--dry-run"], "list does not take --dry-run (only import, revert, bucket init do)"],
    [
      ["bucket", "init", "--dir", "x"],
      "bucket init does not take --dir: it opens no store, only a NATS connection (--servers, --creds)",
    ],
    [["revert"], "revert needs --run"],
    [["show", "k"], "show takes a key and a revision"],
    [["import", "a", "b"], "import takes at most one file"],
    [["bucket"], "bucket needs a subcommand: init"],
  ];
  for (const [args, message] of cases) {
    const r = await cli(t.path, args);
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(r.stderr, `agentmem: ${message}\nagentmem: run with --help for usage\n`);
  }
  assert.deepEqual([...Deno.readDirSync(t.path)], []);
});

Deno.test("cli info without --dir says which directory it looked for and how to choose a store", async () => {
  await using t = await tempDir();
  const r = await cli(t.path, ["info"]);
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    "agentmem: Cannot open the memory directory ./.agentmem (the default: no --dir, --servers or --config was given): it does not exist (only write and import create it)\n",
  );
  assert.deepEqual([...Deno.readDirSync(t.path)], []);
});

Deno.test("cli log shows the newest first; --limit keeps the newest, --reverse turns them oldest first", async () => {
  await using t = await tempDir();
  for (const content of ["one", "two", "three"]) {
    const w = await cli(t.path, [
      "write",
      "k",
      "--description",
      content,
      "--overwrite",
      "--content",
      content,
    ]);
    assert.equal(w.code, 0, w.stderr);
  }
  const descriptions = async (args: string[]) =>
    (JSON.parse((await cli(t.path, ["log", ...args, "--json"])).stdout).versions as {
      description: string;
    }[]).map((v) => v.description);
  assert.deepEqual(await descriptions([]), ["three", "two", "one"]);
  assert.deepEqual(await descriptions(["--limit", "2"]), ["three", "two"]);
  assert.deepEqual(await descriptions(["--reverse"]), ["one", "two", "three"]);
  assert.deepEqual(await descriptions(["--limit", "2", "--reverse"]), ["two", "three"]);
  const human = (await cli(t.path, ["log", "--limit", "1"])).stdout.trimEnd().split("\n");
  assert.equal(human.length, 1);
  assert.match(human[0]!, /\tupdate\t.*three$/);
});

Deno.test("cli --no-history opens the store with history off", async () => {
  await using t = await tempDir();
  const w = await cli(t.path, [
    "write",
    "k",
    "--description",
    "d",
    "--content",
    "c",
    "--no-history",
  ]);
  assert.equal(w.code, 0, w.stderr);
  const info = await cli(t.path, ["info", "--no-history", "--json"]);
  assert.equal(JSON.parse(info.stdout).history, false);
  const h = await cli(t.path, ["history", "k", "--no-history"]);
  assert.equal(h.code, 1);
  assert.match(h.stderr, /history/);
});

Deno.test({
  name: "cli every example its help prints runs as printed, in a shell, against a fresh store",
  ...needsNats(),
  fn: async () => {
    await using t = await tempDir();
    await using shell = await agentmemShell();
    await using server = await startNatsServer();
    const examples: string[] = [];
    for (const name of await commandNames(t.path)) {
      examples.push(...examplesOf((await cli(t.path, [...name.split(" "), "--help"])).stdout));
    }
    // The write first (the others read what it wrote), a restore after the revert's dry run
    // (which the restore's write would make a conflict), a redaction of the version the restore
    // wrote over, the delete, and the purge of what the delete left last.
    const order = [
      "agentmem write",
      "agentmem restore",
      "agentmem redact",
      "agentmem delete",
      "agentmem purge",
    ];
    const rank = (e: string) => [0, 2, 3, 4, 5][order.findIndex((p) => e.startsWith(p))] ?? 1;
    examples.sort((a, b) => rank(a) - rank(b));
    let run = "";
    let revision = "";
    let held = 0;
    for (const printed of examples) {
      // Placeholders are filled from the store; the NATS URL is the test's own server.
      let line = printed.replace("<revision>", revision).replace("<run id>", run)
        .replace("nats://127.0.0.1:4222", server.url);
      if (line.includes("<id>")) line = line.replace("<id>", await heldProposal(t.path, ++held));
      if (printed.startsWith("agentmem serve")) {
        // It serves until stopped: it printed its URL, and stops cleanly on SIGINT.
        await using console = shell.start(line, t.path);
        const url = await console.next((r) =>
          / at http:\/\/127\.0\.0\.1:\d+\/\?token=/.test(String(r.line))
        );
        assert.ok(url);
        console.kill("SIGINT");
        assert.equal((await console.status).code, 0, line);
        continue;
      }
      const r = await shell.run(line, t.path);
      assert.equal(r.code, 0, `${line}\n${r.stdout}${r.stderr}`);
      if (printed.startsWith("agentmem write")) {
        const h = await shell.run("agentmem history user.name --json", t.path);
        const [v] = JSON.parse(h.stdout).versions;
        [run, revision] = [v.run, v.revision];
      }
    }
    assert.ok(examples.length >= 14, examples.join("\n"));
  },
});
