// Every store call the tools make carries the write's provenance: `via` names the tool
// ("memory_write", "claude_memory:str_replace", ...) and `callId` is the model's tool call id, so
// a store's history says which tool call wrote each version.

import assert from "node:assert/strict";
import {
  anthropicMemoryHandlers,
  history,
  memoryTools,
  openFileStore,
  runTool,
  Scope,
  toAnthropicRunnableTools,
} from "../../mod.ts";
import { FakeStore } from "../_lib/fake_store.ts";
import { anthropicMessage, scriptedFetch, toolRunnerTurn, toolUse } from "../_lib/sdk_fetch.ts";
import { tempDir } from "../_lib/temp_dir.ts";

Deno.test("memory tools pass via (their name) and callId (the tool call's id) on every store call", async () => {
  const store = new FakeStore(false);
  const tools = memoryTools(store, { search: true });
  const args = { key: "k", description: "K", content: "v" };
  await runTool(tools, "memory_write", args, { toolCallId: "call_1" });
  await runTool(tools, "memory_write", { ...args, content: "w" }, { toolCallId: "call_2" });
  await runTool(tools, "memory_read", { key: "k" }, { toolCallId: "call_3" });
  await runTool(tools, "memory_list", {}, { toolCallId: "call_4" });
  await runTool(tools, "memory_search", { query: "v" }, { toolCallId: "call_5" });
  await runTool(tools, "memory_delete", { key: "k" }, { toolCallId: "call_6" });
  const seen = store.calls.map((c) => [c.op, c.opts?.via, c.opts?.callId]);
  assert.deepEqual(seen, [
    ["create", "memory_write", "call_1"],
    ["create", "memory_write", "call_2"],
    // The exists refusal looks at the memory it met.
    ["read", "memory_write", "call_2"],
    ["read", "memory_read", "call_3"],
    ["list", "memory_list", "call_4"],
    ["list", "memory_search", "call_5"],
    ["read", "memory_search", "call_5"],
    // The hit shown, read again with the version that wrote it (its tainted mark).
    ["read", "memory_search", "call_5"],
    ["delete", "memory_delete", "call_6"],
  ]);
  // A call id a store would refuse is left out, never a failed call.
  const r = await runTool(tools, "memory_read", { key: "nope" }, { toolCallId: "bad id\n" });
  assert.match(r.content, /No memory has key/);
  assert.equal(store.calls.at(-1)!.opts?.callId, undefined);
  assert.equal(store.calls.at(-1)!.opts?.via, "memory_read");
});

Deno.test("Claude's memory tool handlers pass via claude_memory:<command> and the tool_use id", async () => {
  const store = new FakeStore();
  const memory = anthropicMemoryHandlers(store, { scope: new Scope() });
  const ctx = (id: string) => ({ toolUse: { id } });
  await memory.create({ command: "create", path: "/memories/a.md", file_text: "x" }, ctx("t1"));
  await memory.str_replace(
    { command: "str_replace", path: "/memories/a.md", old_str: "x", new_str: "y" },
    ctx("t2"),
  );
  await memory.rename(
    { command: "rename", old_path: "/memories/a.md", new_path: "/memories/b.md" },
    ctx("t3"),
  );
  await memory.delete({ command: "delete", path: "/memories/b.md" });
  const writes = store.calls.filter((c) => c.op !== "read" && c.op !== "list")
    .map((c) => [c.op, c.opts?.via, c.opts?.callId]);
  assert.deepEqual(writes, [
    ["create", "claude_memory:create", "t1"],
    ["update", "claude_memory:str_replace", "t2"],
    ["create", "claude_memory:rename", "t3"],
    ["delete", "claude_memory:rename", "t3"],
    ["delete", "claude_memory:delete", undefined],
  ]);
});

Deno.test("through the Anthropic tool runner, a file store's history names the tool and the tool_use id", async () => {
  await using dir = await tempDir();
  const store = await openFileStore({ dir: dir.path });
  const script = scriptedFetch([
    anthropicMessage([
      toolUse("toolu_w1", "memory_write", {
        key: "user.units",
        description: "Units",
        content: "SI",
      }),
    ], "tool_use"),
    anthropicMessage([{ type: "text", text: "ok" }]),
  ]);
  await toolRunnerTurn(
    script,
    toAnthropicRunnableTools(memoryTools(store, { scope: new Scope() })),
  );
  const [version] = await history(store, "user.units");
  assert.equal(version?.via, "memory_write");
  assert.equal(version?.callId, "toolu_w1");
});
