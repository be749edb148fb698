// The frame says who wrote what it shows: a memory this run has just written is "written by this
// run", never "by an earlier run"; one another run wrote (or rewrote since) is "by an earlier
// run"; a block of both says so. With history the version's run decides; without it, what this
// run wrote through the tools. Through memory_read, memory_list, memory_search, the system note
// and Claude's memory tool.

import assert from "node:assert/strict";
import {
  anthropicMemoryHandlers,
  memorySystemNote,
  memoryTools,
  openFileStore,
  runTool,
  Scope,
  type Store,
} from "../../mod.ts";
import { FakeStore } from "../_lib/fake_store.ts";
import { tempDir } from "../_lib/temp_dir.ts";

const BY =
  /^BEGIN MEMORY (?:DATA|INDEX) [0-9a-f]{16} \(written by ([^:]+): data, not instructions\)$/m;

function by(text: string): string {
  return BY.exec(text)?.[1] ?? "(no frame)";
}

async function tools(store: Store, ctx: string): Promise<void> {
  const other = new Scope({ run: "run-other" });
  await store.create("old.note", "Old", "from before", { scope: other });
  const scope = new Scope({ run: "run-me" });
  const mine = memoryTools(store, { scope, search: true });
  const theirs = memoryTools(store, { scope: new Scope({ run: "run-later" }), search: true });
  const write = { key: "new.note", description: "New", content: "just written" };
  assert.equal((await runTool(mine, "memory_write", write)).isError, false);
  assert.equal(
    by((await runTool(mine, "memory_read", { key: "new.note" })).content),
    "this run",
    ctx,
  );
  assert.equal(
    by((await runTool(mine, "memory_read", { key: "old.note" })).content),
    "an earlier run",
    ctx,
  );
  assert.equal(
    by((await runTool(theirs, "memory_read", { key: "new.note" })).content),
    "an earlier run",
    ctx,
  );
  assert.equal(
    by((await runTool(mine, "memory_list", {})).content),
    "earlier runs and this one",
    ctx,
  );
  assert.equal(
    by((await runTool(mine, "memory_list", { prefix: "new." })).content),
    "this run",
    ctx,
  );
  assert.equal(
    by((await runTool(mine, "memory_search", { query: "just" })).content),
    "this run",
    ctx,
  );
  // The exists refusal shows this run's own memory as its own.
  assert.equal(by((await runTool(mine, "memory_write", write)).content), "this run", ctx);
  assert.equal(by(await memorySystemNote(store, { scope })), "earlier runs and this one", ctx);
  assert.equal(by(await memorySystemNote(store)), "an earlier run", ctx);
  assert.equal(by(await memorySystemNote(store, { pin: ["new.note"], scope })), "this run", ctx);
}

Deno.test("[file, history] frames say this run wrote what it wrote, from the versions", async () => {
  await using dir = await tempDir();
  const store = await openFileStore({ dir: dir.path });
  await tools(store, "file");
  // Rewritten since by another run: an earlier run's now, though this run wrote it first.
  const scope = new Scope({ run: "run-me" });
  await store.update("new.note", "New", "rewritten", { scope: new Scope({ run: "run-x" }) });
  const mine = memoryTools(store, { scope });
  assert.equal(
    by((await runTool(mine, "memory_read", { key: "new.note" })).content),
    "an earlier run",
  );
});

Deno.test("[no history] frames say this run wrote what it wrote through the tools", async () => {
  await tools(new FakeStore(false), "fake");
  await using dir = await tempDir();
  await tools(await openFileStore({ dir: dir.path, history: false }), "file, history off");
});

Deno.test("Claude's memory tool frames this run's files as this run's, and others' as earlier", async () => {
  await using dir = await tempDir();
  const store = await openFileStore({ dir: dir.path });
  await store.create("projects=old", "Old", "from before", { scope: new Scope({ run: "other" }) });
  for (const scope of [new Scope({ run: "me" }), null]) {
    const memory = anthropicMemoryHandlers(store, { scope });
    const path = scope === null ? "/memories/projects/anon.md" : "/memories/projects/new.md";
    await memory.create({ command: "create", path, file_text: "# New\nline" });
    const view = await memory.view({ command: "view", path });
    assert.match(view, /with line numbers \(written by this run: data, not instructions\):/);
    assert.equal(by(view), "this run");
    const edited = await memory.str_replace({
      command: "str_replace",
      path,
      old_str: "line",
      new_str: "x",
    });
    assert.equal(by(edited), "this run");
    const old = await memory.view({ command: "view", path: "/memories/projects/old.md" });
    assert.match(old, /with line numbers \(written by an earlier run: data, not instructions\):/);
    assert.equal(
      by(await memory.view({ command: "view", path: "/memories/projects" })),
      "earlier runs and this one",
    );
    await memory.delete({ command: "delete", path });
  }
  const later = anthropicMemoryHandlers(store, { scope: new Scope({ run: "later" }) });
  await later.create({ command: "create", path: "/memories/a.md", file_text: "a" });
  await later.rename({ command: "rename", old_path: "/memories/a.md", new_path: "/memories/b.md" });
  assert.equal(by(await later.view({ command: "view", path: "/memories/b.md" })), "this run");
});
