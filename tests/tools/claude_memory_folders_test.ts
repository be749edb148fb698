// Folders in Claude's memory tool, on both backends: files anywhere, memory_write keys at their
// mapped paths, a view two levels deep, a folder's delete undone by one revertRun, and renames
// across folders racing edits in another process without losing one.

import assert from "node:assert/strict";
import {
  anthropicMemoryHandlers,
  auditLog,
  memoryTools,
  openFileStore,
  revertRun,
  runTool,
  Scope,
  type Store,
} from "../../mod.ts";
import Anthropic from "@anthropic-ai/sdk";
import { chat as claudeMemoryChat } from "../../examples/claude_memory_tool.ts";
import { blocksOf } from "./_helpers.ts";
import { anthropicMessage, scriptedFetch, toolResults, toolUse } from "../_lib/sdk_fetch.ts";
import { BUCKET, jetstreamTest, natsFixture } from "../_lib/jetstream_fixture.ts";
import { ChildGroup, spawnDeno } from "../_lib/spawn.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import type { RaceJob } from "./_folder_race_worker.ts";

function listed(view: string): string[] {
  return blocksOf(view).find((b) => b.kind === "MEMORY INDEX")?.lines ?? [];
}

async function folders(store: Store): Promise<void> {
  const [, , write] = memoryTools(store);
  await write!.run({ key: "projects=acme", description: "Acme", content: "# Acme\nsigned" });
  await write!.run({ key: "user.preferences", description: "Prefs", content: "metric" });
  await write!.run({ key: "a==b", description: "Odd", content: "odd" });
  const memory = anthropicMemoryHandlers(store, { scope: new Scope({ run: "run-1" }) });
  await memory.create({ command: "create", path: "/memories/projects/beta.md", file_text: "# B" });
  await memory.create({ command: "create", path: "/memories/projects/2025/q3.md", file_text: "q" });
  await memory.create({ command: "create", path: "/memories/projects/2025/x/y.md", file_text: "" });
  // memory_write's keys show at their paths, two levels deep, folders with what they hold.
  assert.deepEqual(listed(await memory.view({ command: "view", path: "/memories" })), [
    '- "/memories/a==b" (3B): Odd',
    '- "/memories/projects/" (4 files)',
    '- "/memories/projects/2025/" (2 files)',
    '- "/memories/projects/acme.md" (13B): Acme',
    '- "/memories/projects/beta.md" (3B): B',
    '- "/memories/user.preferences.md" (6B): Prefs',
  ]);
  assert.deepEqual(
    listed(await memory.view({ command: "view", path: "/memories/projects/2025" })),
    [
      '- "/memories/projects/2025/q3.md" (1B): q',
      '- "/memories/projects/2025/x/" (1 file)',
      '- "/memories/projects/2025/x/y.md" (0B): Memory file (no text yet)',
    ],
  );
  await memory.str_replace({
    command: "str_replace",
    path: "/memories/projects/acme.md",
    old_str: "signed",
    new_str: "signed, paid",
  });
  await memory.insert({
    command: "insert",
    path: "/memories/a==b",
    insert_line: 1,
    insert_text: "!",
  });
  assert.equal((await store.read("projects=acme")).content, "# Acme\nsigned, paid");
  assert.equal((await store.read("a==b")).content, "odd\n!");
  // Across folders, and a whole folder.
  await memory.rename({
    command: "rename",
    old_path: "/memories/projects/beta.md",
    new_path: "/memories/archive/beta.md",
  });
  await memory.rename({
    command: "rename",
    old_path: "/memories/projects/2025",
    new_path: "/memories/archive/2025",
  });
  assert.deepEqual((await store.list()).map((i) => i.key).sort(), [
    "a==b",
    "archive=2025=q3",
    "archive=2025=x=y",
    "archive=beta",
    "projects=acme",
    "user.preferences",
  ]);
  await assert.rejects(
    memory.rename({
      command: "rename",
      old_path: "/memories/archive",
      new_path: "/memories/projects",
    }),
    /The destination \/memories\/projects already exists/,
  );
  await assert.rejects(
    memory.rename({
      command: "rename",
      old_path: "/memories/archive",
      new_path: "/memories/archive/in",
    }),
    /into itself/,
  );
  await assert.rejects(
    memory.str_replace({
      command: "str_replace",
      path: "/memories/archive",
      old_str: "",
      new_str: "",
    }),
    /The path \/memories\/archive is not a file/,
  );

  // A folder's delete: one version per key, under the run; one revertRun brings it all back.
  const before = await store.list();
  const cleaner = anthropicMemoryHandlers(store, { scope: new Scope({ run: "run-clean" }) });
  assert.equal(
    await cleaner.delete({ command: "delete", path: "/memories/archive" }),
    "Successfully deleted /memories/archive",
  );
  assert.deepEqual((await store.list()).map((i) => i.key).sort(), [
    "a==b",
    "projects=acme",
    "user.preferences",
  ]);
  const deletes = await auditLog(store, { run: "run-clean" });
  assert.deepEqual(deletes.map((v) => [v.key, v.op, v.via]).sort(), [
    ["archive=2025=q3", "delete", "claude_memory:delete"],
    ["archive=2025=x=y", "delete", "claude_memory:delete"],
    ["archive=beta", "delete", "claude_memory:delete"],
  ]);
  await assert.rejects(
    cleaner.delete({ command: "delete", path: "/memories/archive" }),
    /The path \/memories\/archive does not exist/,
  );
  await revertRun(store, "run-clean");
  assert.deepEqual(await store.list(), before);
}

Deno.test("[file] Claude memory folders: create, view, edit, rename and delete anywhere; a folder delete reverts", async () => {
  await using dir = await tempDir();
  await folders(await openFileStore({ dir: dir.path }));
});

jetstreamTest(
  "Claude memory folders: create, view, edit, rename and delete anywhere; a folder delete reverts",
  async () => {
    await using nats = await natsFixture();
    await folders(await nats.open());
  },
);

Deno.test("[file] /memories/x.md is the key x, kept in the file x.md (never x.md.md)", async () => {
  await using dir = await tempDir();
  const store = await openFileStore({ dir: dir.path });
  const memory = anthropicMemoryHandlers(store, { scope: new Scope() });
  await memory.create({ command: "create", path: "/memories/x.md", file_text: "x" });
  await memory.create({ command: "create", path: "/memories/notes.txt", file_text: "n" });
  const names = (await Array.fromAsync(Deno.readDir(dir.path), (e) => e.name))
    .filter((n) => !n.startsWith(".")).sort();
  assert.deepEqual(names, ["notes.txt=.md", "x.md"]);
  // memory_read names the same memory by its key.
  const read = await runTool(memoryTools(store), "memory_read", { key: "x" });
  assert.match(read.content, /\| x/);
});

Deno.test("[file] through the SDK's betaMemoryTool runner, Claude's folder habits work as trained", async () => {
  await using dir = await tempDir();
  const store = await openFileStore({ dir: dir.path });
  const memory = (id: string, input: unknown) => toolUse(id, "memory", input);
  const turns: [string, unknown][] = [
    ["t1", { command: "view", path: "/memories" }],
    ["t2", { command: "create", path: "/memories/user/preferences.md", file_text: "# Prefs\nSI" }],
    ["t3", { command: "create", path: "/memories/projects/acme/notes.md", file_text: "# Acme" }],
    ["t4", { command: "view", path: "/memories/projects" }],
    ["t5", {
      command: "rename",
      old_path: "/memories/projects/acme",
      new_path: "/memories/archive/acme",
    }],
    ["t6", { command: "view", path: "/memories/archive/acme/notes.md" }],
    ["t7", { command: "delete", path: "/memories/archive" }],
    ["t8", { command: "create", path: "/memories/user/../../etc/x.md", file_text: "x" }],
  ];
  const script = scriptedFetch([
    ...turns.map(([id, input]) => anthropicMessage([memory(id, input)], "tool_use")),
    anthropicMessage([{ type: "text", text: "Done." }]),
  ]);
  const client = new Anthropic({ apiKey: "k", fetch: script.fetch, maxRetries: 0 });
  assert.equal(await claudeMemoryChat(client, store, "Organize my notes."), "Done.");
  // Request i carries the result of turn i.
  const results = turns.map((_, i) => toolResults(script, i + 1).at(-1)!);
  assert.deepEqual(results.map((r) => r.is_error === true), [
    ...Array(turns.length - 1).fill(false),
    true,
  ]);
  assert.match(results[0]!.content, /there are none yet/);
  assert.deepEqual(listed(results[3]!.content), [
    '- "/memories/projects/acme/" (1 file)',
    '- "/memories/projects/acme/notes.md" (6B): Acme',
  ]);
  assert.match(results[5]!.content, /\n {5}1\t# Acme\n/);
  assert.match(results[7]!.content, /not a legal memory path \(it has a "\." or "\.\." name\)/);
  assert.deepEqual((await store.list()).map((i) => i.key), ["user=preferences"]);
});

async function race(store: RaceJob["store"], open: () => Promise<Store>): Promise<void> {
  const trials = 30;
  const files = 10;
  const setup = await open();
  for (let i = 0; i < trials; i++) await setup.create(`inbox=t${i}`, "Trial", "x: 0\n");
  for (let f = 0; f < files; f++) await setup.create(`box=f${f}`, "Box", "x: 0\n");
  const job = { store, trials, files, startAt: Date.now() + 3_000, slotMs: 60 };
  const worker = new URL("./_folder_race_worker.ts", import.meta.url);
  await using group = new ChildGroup();
  for (const role of ["mover", "editor"] as const) {
    group.add(spawnDeno(worker, [JSON.stringify({ ...job, role })], { timeLimitMs: 60_000 }));
  }
  const done = (await group.waitForAll("done")).map((r) => r.ok as boolean[]);
  await group.succeeded();
  const [mover, editor] = done as [boolean[], boolean[]];
  const held = async (key: string) => (await setup.read(key).catch(() => undefined))?.content;
  let raced = 0;
  for (let i = 0; i < trials; i++) {
    const [a, b] = [await held(`inbox=t${i}`), await held(`done=t${i}`)];
    assert.ok(a !== undefined || b !== undefined, `trial ${i}: both gone`);
    if (editor[i]) assert.ok(a === "x: 1\n" || b === "x: 1\n", `trial ${i}: edit lost`);
    if (mover[i]) assert.ok(a === undefined && b !== undefined, `trial ${i}: moved, yet ${a}`);
    if (mover[i] === editor[i]) raced++;
  }
  for (let f = 0; f < files; f++) {
    const [a, b] = [await held(`box=f${f}`), await held(`old=box=f${f}`)];
    assert.ok((a === undefined) !== (b === undefined), `box file ${f}: ${a} / ${b}`);
    if (editor[trials + f]) assert.equal(a ?? b, "x: 1\n", `box file ${f}: edit lost`);
  }
  console.log(
    `renames ok ${mover.slice(0, trials).filter(Boolean).length}/${trials}, edits ok ` +
      `${editor.slice(0, trials).filter(Boolean).length}/${trials} (both or neither: ${raced}); ` +
      `folder move ${mover[trials] ? "whole" : "partial"}, ` +
      `${editor.slice(trials).filter(Boolean).length}/${files} of its files edited`,
  );
}

Deno.test("[file] renames across folders racing edits in another process lose no edit", async () => {
  await using dir = await tempDir();
  await race({ dir: dir.path }, () => openFileStore({ dir: dir.path }));
});

jetstreamTest("renames across folders racing edits in another process lose no edit", async () => {
  await using nats = await natsFixture();
  await race({ servers: nats.server.url, bucket: BUCKET }, () => nats.open());
});
