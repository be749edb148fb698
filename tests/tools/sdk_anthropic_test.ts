// The Anthropic SDK's own tool runner driving toAnthropicRunnableTools and betaMemoryTool with
// anthropicMemoryHandlers, over a scripted fetch (no network); the examples of docs/tools.md run here.

import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import type { BetaRunnableTool } from "@anthropic-ai/sdk/lib/tools/BetaRunnableTool";
import {
  defineTool,
  memoryTools,
  toAnthropicRunnableTools,
  type ToolRunOptions,
} from "../../mod.ts";
import { chat as toolRunnerChat } from "../../examples/anthropic_tool_runner.ts";
import { chat as claudeMemoryChat } from "../../examples/claude_memory_tool.ts";
import { FakeStore } from "../_lib/fake_store.ts";
import { spawnChild } from "../_lib/spawn.ts";
import {
  anthropicMessage,
  type ScriptedFetch,
  scriptedFetch,
  toolResults,
  toolUse,
} from "../_lib/sdk_fetch.ts";

function client(script: ScriptedFetch): Anthropic {
  return new Anthropic({ apiKey: "test-key", fetch: script.fetch, maxRetries: 0 });
}

Deno.test("toAnthropicRunnableTools() types as the SDK's BetaRunnableTool", () => {
  const runnable: BetaRunnableTool<unknown>[] = toAnthropicRunnableTools(
    memoryTools(new FakeStore()),
  );
  assert.deepEqual(Object.keys(runnable[0]!), [
    "name",
    "description",
    "input_schema",
    "parse",
    "run",
  ]);
});

Deno.test("the tool runner example stores a memory; refusals reach the model as is_error with their text", async () => {
  const store = new FakeStore();
  store.seed("user.name", "What the user wants to be called", "Sam");
  const script = scriptedFetch([
    anthropicMessage([
      toolUse("toolu_1", "memory_write", {
        key: "user.units",
        description: "Preferred units",
        content: "metric",
      }),
      toolUse("toolu_2", "memory_read", { key: "missing" }),
      toolUse("toolu_3", "memory_write", { key: "bad key", description: "d", content: "c" }),
    ], "tool_use"),
    anthropicMessage([{ type: "text", text: "Noted: metric." }]),
  ]);
  const text = await toolRunnerChat(client(script), store, "I prefer metric units.");
  assert.equal(text, "Noted: metric.");
  assert.equal(script.left(), 0);
  assert.equal(store.entries.get("user.units")?.content, "metric");
  const first = script.requests[0]!.body as { system: string; model: string; tools: unknown[] };
  assert.equal(first.model, "claude-sonnet-4-6");
  assert.match(first.system, /"user\.name": What the user wants to be called/);
  assert.equal(first.tools.length, 4);
  const [written, missing, bad] = toolResults(script, 1);
  assert.deepEqual(written, {
    type: "tool_result",
    tool_use_id: "toolu_1",
    content: 'Saved new memory "user.units".',
  });
  const refusal = await memoryTools(new FakeStore())[1]!.run({ key: "missing" });
  assert.deepEqual(missing, {
    type: "tool_result",
    tool_use_id: "toolu_2",
    content: refusal.content,
    is_error: true,
  });
  assert.equal(bad!.is_error, true);
  assert.match(bad!.content, /^Refused: Invalid memory key "bad key"/);
  assert.equal(store.entries.size, 2);
});

Deno.test("toAnthropicRunnableTools() passes the runner's abort signal and the tool_use id to the tool", async () => {
  const seen: ToolRunOptions[] = [];
  const probe = defineTool({
    name: "probe",
    description: "Records how it was called.",
    inputSchema: { type: "object" },
    expose: {},
    run: (_input, opts) => {
      seen.push(opts ?? {});
      return { isError: true, content: "Refused: probe always refuses" };
    },
  });
  const script = scriptedFetch([
    anthropicMessage([toolUse("toolu_probe", "probe", {})], "tool_use"),
    anthropicMessage([{ type: "text", text: "ok" }]),
  ]);
  const controller = new AbortController();
  await client(script).beta.messages.toolRunner({
    model: "claude-sonnet-4-6",
    max_tokens: 100,
    messages: [{ role: "user", content: "probe" }],
    // Without the SDK's ToolError, the runner sends a thrown Error as "Error: <text>".
    tools: toAnthropicRunnableTools([probe]),
  }, { signal: controller.signal });
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.toolCallId, "toolu_probe");
  assert.ok(seen[0]!.signal instanceof AbortSignal);
  assert.equal(seen[0]!.signal!.aborted, false);
  controller.abort();
  assert.equal(seen[0]!.signal!.aborted, true);
  assert.deepEqual(toolResults(script, 1), [{
    type: "tool_result",
    tool_use_id: "toolu_probe",
    content: "Error: Refused: probe always refuses",
    is_error: true,
  }]);
});

Deno.test("toAnthropicRunnableTools() refuses bad options with ConfigError", () => {
  const tools = memoryTools(new FakeStore());
  assert.throws(() => toAnthropicRunnableTools(tools, { toolError: 1 } as never), /unknown option/);
  assert.throws(() => toAnthropicRunnableTools(tools, { ToolError: "x" as never }), /ToolError/);
});

Deno.test("the Claude memory tool example keeps /memories in the store, with failures as is_error", async () => {
  const store = new FakeStore();
  const memory = (id: string, input: unknown) => toolUse(id, "memory", input);
  const script = scriptedFetch([
    anthropicMessage([memory("t1", { command: "view", path: "/memories" })], "tool_use"),
    anthropicMessage([
      memory("t2", { command: "create", path: "/memories/units.md", file_text: "# Units\nmetric" }),
    ], "tool_use"),
    anthropicMessage([
      memory("t3", { command: "create", path: "/memories/units.md", file_text: "again" }),
      memory("t4", {
        command: "str_replace",
        path: "/memories/units.md",
        old_str: "metric",
        new_str: "metric (SI)",
      }),
      memory("t5", { command: "create", path: "/memories/a/b.md", file_text: "x" }),
      memory("t6", { command: "create", path: "/memories/../b.md", file_text: "x" }),
    ], "tool_use"),
    anthropicMessage([{ type: "text", text: "Saved." }]),
  ]);
  assert.equal(await claudeMemoryChat(client(script), store, "I prefer metric units."), "Saved.");
  const first = script.requests[0]!.body as { tools: unknown[] };
  assert.deepEqual(first.tools, [{ type: "memory_20250818", name: "memory" }]);
  assert.deepEqual(store.entries.get("units") && { ...store.entries.get("units"), rev: 0 }, {
    description: "Units",
    content: "# Units\nmetric (SI)",
    rev: 0,
  });
  const [view] = toolResults(script, 1);
  assert.match(view!.content, /there are none yet/);
  const [exists, edited, nested, hostile] = toolResults(script, 3);
  assert.deepEqual(exists, {
    type: "tool_result",
    tool_use_id: "t3",
    content: "Error: File /memories/units.md already exists",
    is_error: true,
  });
  assert.equal(edited!.is_error, undefined);
  assert.match(edited!.content, /^The memory file has been edited/);
  // A folder is a folder (/memories/a/b.md is the key a=b); a path out of /memories is refused.
  assert.equal(nested!.is_error, undefined);
  assert.equal(store.entries.get("a=b")?.content, "x");
  assert.equal(hostile!.is_error, true);
  assert.match(hostile!.content, /not a legal memory path/);
  assert.equal(store.entries.size, 2);
});

Deno.test("importing mod.ts loads none of the SDKs", async () => {
  const out = await spawnChild(Deno.execPath(), ["info", "--json", "mod.ts"], {
    cwd: new URL("../..", import.meta.url),
  }).finished();
  assert.ok(out.success);
  const info = JSON.parse(out.stdout) as {
    modules: { kind: string; npmPackage?: string }[];
    npmPackages: Record<string, { dependencies?: string[] }>;
  };
  // The npm packages mod.ts imports, and everything they depend on.
  const reached = new Set<string>();
  const visit = (pkg: string) => {
    if (reached.has(pkg)) return;
    reached.add(pkg);
    for (const dep of info.npmPackages[pkg]?.dependencies ?? []) visit(dep);
  };
  for (const m of info.modules) if (m.kind === "npm" && m.npmPackage) visit(m.npmPackage);
  const packages = [...reached];
  assert.ok(packages.some((p) => p.startsWith("yaml@")), packages.join(", "));
  for (const sdk of ["@anthropic-ai/", "openai@", "ai@", "@ai-sdk/"]) {
    assert.deepEqual(packages.filter((p) => p.startsWith(sdk)), [], `${sdk} is in mod.ts's graph`);
  }
});
