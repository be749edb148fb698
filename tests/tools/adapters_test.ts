// The adapters' output checked against the official SDKs' own types, and the AI SDK adapter run
// through the real `generateText` loop with the SDK's mock model.

import assert from "node:assert/strict";
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { generateText, isStepCount, jsonSchema, type ToolSet } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import {
  ConfigError,
  defineTool,
  memoryTools,
  toAISDKTools,
  toAnthropicTools,
  type Tool,
  toOpenAITools,
} from "../../mod.ts";
import { FakeStore } from "../_lib/fake_store.ts";

const tools = memoryTools(new FakeStore());

Deno.test("toAnthropicTools() gives Messages API tool entries", () => {
  const entries: Anthropic.Messages.Tool[] = toAnthropicTools(tools);
  const union: Anthropic.Messages.ToolUnion[] = toAnthropicTools(tools);
  const params: Pick<Anthropic.Messages.MessageCreateParams, "tools"> = {
    tools: toAnthropicTools(tools),
  };
  assert.equal(union.length, 4);
  assert.equal(params.tools?.length, 4);
  assert.deepEqual(
    entries.map((t) => Object.keys(t)),
    tools.map(() => [
      "name",
      "description",
      "input_schema",
    ]),
  );
  for (const [i, tool] of tools.entries()) {
    assert.equal(entries[i]!.name, tool.name);
    assert.equal(entries[i]!.description, tool.description);
    assert.deepEqual(entries[i]!.input_schema, tool.inputSchema);
  }
  assert.deepEqual(entries[1]!.input_schema.required, ["key"]);
});

Deno.test("toOpenAITools() gives Chat Completions function tools", () => {
  const entries: OpenAI.Chat.Completions.ChatCompletionFunctionTool[] = toOpenAITools(tools);
  const union: OpenAI.Chat.Completions.ChatCompletionTool[] = toOpenAITools(tools);
  assert.equal(union.length, 4);
  for (const [i, tool] of tools.entries()) {
    assert.deepEqual(Object.keys(entries[i]!), ["type", "function"]);
    assert.equal(entries[i]!.type, "function");
    assert.deepEqual(entries[i]!.function, {
      name: tool.name,
      description: tool.description,
      parameters: tool.inputSchema,
    });
  }
});

Deno.test("a tool result maps onto Anthropic tool_result and OpenAI tool messages", async () => {
  const read = tools.find((t) => t.name === "memory_read")!;
  const r = await read.run({ key: "missing" });
  const block: Anthropic.Messages.ToolResultBlockParam = {
    type: "tool_result",
    tool_use_id: "toolu_1",
    content: r.content,
    is_error: r.isError,
  };
  const message: OpenAI.Chat.Completions.ChatCompletionToolMessageParam = {
    role: "tool",
    tool_call_id: "call_1",
    content: r.content,
  };
  assert.equal(block.is_error, true);
  assert.match(message.content as string, /No memory has key "missing"/);
});

Deno.test("adapters hand out copies: changing one never changes the tool", () => {
  const [a] = toAnthropicTools(tools);
  a!.input_schema.additionalProperties = true;
  const [o] = toOpenAITools(tools);
  o!.function.parameters.type = "object";
  (o!.function.parameters as Record<string, unknown>).extra = 1;
  assert.equal(tools[0]!.inputSchema.additionalProperties, false);
  assert.equal(toAnthropicTools(tools)[0]!.input_schema.additionalProperties, false);
  assert.equal("extra" in toOpenAITools(tools)[0]!.function.parameters, false);
});

Deno.test("adapters refuse duplicate names and non-tools", () => {
  const twice = [...tools, tools[0]!];
  assert.throws(() => toAnthropicTools(twice), /two tools are named "memory_list"/);
  assert.throws(() => toOpenAITools(twice), ConfigError);
  assert.throws(() => toAISDKTools(twice, { jsonSchema }), ConfigError);
  assert.throws(() => toAnthropicTools("x" as never), ConfigError);
  assert.throws(() => toOpenAITools([{}] as never), ConfigError);
  assert.deepEqual(toAnthropicTools([]), []);
});

Deno.test("toAISDKTools() gives an AI SDK ToolSet", async () => {
  const set: ToolSet = toAISDKTools(tools, { jsonSchema });
  assert.deepEqual(Object.keys(set), tools.map((t) => t.name));
  const own = toAISDKTools(tools, { jsonSchema });
  const schema = await own.memory_write!.inputSchema.jsonSchema;
  assert.deepEqual(schema, tools[2]!.inputSchema);
  const ok = await own.memory_list!.execute({}, {});
  assert.deepEqual(own.memory_list!.toModelOutput({ output: ok }), {
    type: "text",
    value: "No memories are saved yet.",
  });
  const refused = await own.memory_read!.execute({ key: 1 }, {});
  assert.equal(own.memory_read!.toModelOutput({ output: refused }).type, "error-text");
});

Deno.test("toAISDKTools() keeps a tool named __proto__ as a tool", () => {
  const odd: Tool = defineTool({
    name: "__proto__",
    description: "Odd.",
    inputSchema: { type: "object" },
    expose: {},
    run: () => ({ isError: false, content: "" }),
  });
  const set = toAISDKTools([odd], { jsonSchema: (s) => s });
  assert.ok(Object.hasOwn(set, "__proto__"));
  assert.equal(Object.getPrototypeOf(set), Object.prototype);
});

Deno.test({
  name: "toAISDKTools() runs inside generateText: calls, results and refusals reach the model",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const store = new FakeStore();
    store.seed("k", "A note", "hello");
    const usage = {
      inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 1, text: 1, reasoning: 0 },
    };
    const call = (id: string, toolName: string, input: unknown) => ({
      type: "tool-call" as const,
      toolCallId: id,
      toolName,
      input: JSON.stringify(input),
    });
    const model = new MockLanguageModelV4({
      doGenerate: [
        {
          content: [
            call("c1", "memory_write", { key: "k2", description: "Another", content: "hi" }),
            call("c2", "memory_write", { key: "k", description: "Again", content: "bye" }),
          ],
          finishReason: { unified: "tool-calls", raw: "tool_use" },
          usage,
          warnings: [],
        },
        {
          content: [{ type: "text", text: "done" }],
          finishReason: { unified: "stop", raw: "end_turn" },
          usage,
          warnings: [],
        },
      ],
    });
    const result = await generateText({
      model,
      tools: toAISDKTools(memoryTools(store), { jsonSchema }),
      prompt: "remember hello",
      stopWhen: isStepCount(3),
    });
    assert.equal(result.text, "done");
    assert.equal(store.entries.get("k")?.content, "hello");
    assert.equal(store.entries.get("k2")?.content, "hi");
    const [first, second] = model.doGenerateCalls;
    const offered = (first!.tools ?? []).map((t) => t.type === "function" ? t.name : t.type);
    assert.deepEqual(offered, ["memory_list", "memory_read", "memory_write", "memory_delete"]);
    const outputs = second!.prompt.flatMap((m) =>
      m.role === "tool"
        ? m.content.flatMap((p) => p.type === "tool-result" ? [[p.toolCallId, p.output]] : [])
        : []
    );
    assert.deepEqual(outputs[0], ["c1", { type: "text", value: 'Saved new memory "k2".' }]);
    const [id, output] = outputs[1] as [string, { type: string; value: string }];
    assert.equal(id, "c2");
    assert.equal(output.type, "error-text");
    assert.match(output.value, /already exists/);
  },
});
