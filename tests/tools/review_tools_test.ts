// Held writes as the model meets them, on both backends: memory_write, memory_delete, Claude's
// memory-tool commands and every adapter answer a write held for review with one honest sentence
// that is no error (nothing to retry), make exactly one proposal per call, and memory_read of a
// key with a pending change shows what the memory holds now.

import assert from "node:assert/strict";
import {
  anthropicMemoryHandlers,
  memoryTools,
  openFileStore,
  proposals,
  runTool,
  Scope,
  type Store,
  toAISDKTools,
  toAnthropicRunnableTools,
} from "../../mod.ts";
import { jetstreamTest, natsFixture } from "../_lib/jetstream_fixture.ts";
import { tempDir } from "../_lib/temp_dir.ts";

const HELD = /is held for review by an operator; other runs will not see it until it is approved/;

function bothBackends(name: string, fn: (store: Store) => Promise<void>): void {
  Deno.test(`[file] ${name}`, async () => {
    await using dir = await tempDir();
    await fn(await openFileStore({ dir: dir.path, review: "tainted" }));
  });
  jetstreamTest(name, async () => {
    await using nats = await natsFixture();
    await fn(await nats.open({ review: "tainted" }));
  });
}

bothBackends(
  "memoryTools answer a held write as held, once per call, and read shows what is there",
  async (store) => {
    await store.create("prefs", "User preferences", "metric units");
    const scope = new Scope({ run: "run-web", tainted: true });
    const tools = memoryTools(store, { scope });
    const created = await runTool(tools, "memory_write", {
      key: "tip",
      description: "A tip",
      content: "obey",
    });
    assert.equal(created.isError, false);
    assert.match(created.content, /^Your new memory "tip" is held for review by an operator/);
    assert.match(created.content, /do not write it again/);
    assert.doesNotMatch(created.content, /Saved|Refused|retry/);
    assert.equal((await runTool(tools, "memory_read", { key: "prefs" })).isError, false);
    const updated = await runTool(tools, "memory_write", {
      key: "prefs",
      description: "User preferences",
      content: "poison",
      overwrite: true,
    });
    assert.match(updated.content, /^Your change to memory "prefs" is held for review/);
    const deleted = await runTool(tools, "memory_delete", { key: "prefs" });
    assert.equal(deleted.isError, false);
    assert.match(deleted.content, /^Your deletion of memory "prefs" is held for review/);
    // The model reading the key sees the memory as it is, never the proposal.
    const read = await runTool(tools, "memory_read", { key: "prefs" });
    assert.match(read.content, /metric units/);
    assert.doesNotMatch(read.content, /poison/);
    const missing = await runTool(tools, "memory_read", { key: "tip" });
    assert.match(missing.content, /No memory has key "tip"/);
    assert.deepEqual((await proposals(store)).map((p) => [p.key, p.op, p.via]), [
      ["tip", "create", "memory_write"],
      ["prefs", "update", "memory_write"],
      ["prefs", "delete", "memory_delete"],
    ]);
  },
);

bothBackends(
  "Claude's memory-tool commands answer held writes as held, without an error",
  async (store) => {
    const owner = anthropicMemoryHandlers(store, { scope: new Scope() });
    await owner.create({
      command: "create",
      path: "/memories/notes.md",
      file_text: "# Notes\nkept",
    });
    const memory = anthropicMemoryHandlers(store, {
      scope: new Scope({ run: "run-web", tainted: true }),
    });
    const texts = [
      await memory.create({ command: "create", path: "/memories/new.md", file_text: "planted" }),
      await memory.str_replace({
        command: "str_replace",
        path: "/memories/notes.md",
        old_str: "kept",
        new_str: "obey",
      }),
      await memory.insert({
        command: "insert",
        path: "/memories/notes.md",
        insert_line: 1,
        insert_text: "x",
      }),
      await memory.rename({
        command: "rename",
        old_path: "/memories/notes.md",
        new_path: "/memories/n.md",
      }),
      await memory.delete({ command: "delete", path: "/memories/notes.md" }),
    ];
    for (const text of texts) assert.match(text, HELD);
    assert.match(texts[0]!, /^The create of \/memories\/new\.md is held/);
    assert.match(texts[3]!, /^The rename of \/memories\/notes\.md to \/memories\/n\.md is held/);
    assert.match(texts[3]!, /do not repeat the command/);
    // Nothing changed for anyone; the view shows the file as it is.
    assert.match(await memory.view({ command: "view", path: "/memories/notes.md" }), /kept/);
    assert.deepEqual((await store.list()).map((i) => i.key), ["notes"]);
    assert.deepEqual((await proposals(store)).map((p) => [p.key, p.op, p.via]), [
      ["new", "create", "claude_memory:create"],
      ["notes", "update", "claude_memory:str_replace"],
      ["notes", "update", "claude_memory:insert"],
      ["n", "create", "claude_memory:rename"],
      ["notes", "delete", "claude_memory:rename"],
      ["notes", "delete", "claude_memory:delete"],
    ]);
  },
);

bothBackends(
  "the adapters pass a held write's answer on as a result, not an error",
  async (store) => {
    const scope = new Scope({ tainted: true });
    const [, , write] = toAnthropicRunnableTools(memoryTools(store, { scope }));
    const text = await write!.run({ key: "a", description: "d", content: "c" }, {
      toolUse: { id: "toolu_held" },
    } as never);
    assert.match(String(text), HELD);
    const sdk = toAISDKTools(memoryTools(store, { scope }), { jsonSchema: (s: object) => s });
    const result = await sdk.memory_write!.execute(
      { key: "b", description: "d", content: "c" },
      {},
    );
    assert.deepEqual(sdk.memory_write!.toModelOutput({ output: result }).type, "text");
    assert.match(result.content, HELD);
    const held = await proposals(store);
    assert.deepEqual(held.map((p) => [p.key, p.callId]), [["a", "toolu_held"], ["b", undefined]]);
  },
);
