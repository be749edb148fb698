// toOpenAITools for Chat Completions and Responses, strict-mode schemas, and the OpenAI
// examples run by the real `openai` client over a scripted fetch (no network).

import assert from "node:assert/strict";
import type OpenAI from "openai";
import OpenAIClient from "openai";
import { defineTool, memoryTools, runTool, toOpenAITools } from "../../mod.ts";
import { chat as chatCompletions } from "../../examples/openai_chat.ts";
import { chat as chatResponses } from "../../examples/openai_responses.ts";
import { FakeStore } from "../_lib/fake_store.ts";
import {
  openaiResponse as response,
  type ScriptedFetch,
  scriptedFetch,
} from "../_lib/sdk_fetch.ts";

const tools = memoryTools(new FakeStore());

function client(script: ScriptedFetch): OpenAIClient {
  return new OpenAIClient({ apiKey: "test-key", fetch: script.fetch, maxRetries: 0 });
}

// Every object schema in `schema` meets OpenAI's strict-mode rules.
function assertStrict(schema: unknown, where = "schema"): void {
  if (Array.isArray(schema)) return schema.forEach((s, i) => assertStrict(s, `${where}[${i}]`));
  if (schema === null || typeof schema !== "object") return;
  const s = schema as Record<string, unknown>;
  if (s.type === "object") {
    const properties = (s.properties ?? {}) as Record<string, unknown>;
    assert.deepEqual(s.required, Object.keys(properties), `${where}: every property required`);
    assert.equal(s.additionalProperties, false, `${where}: additionalProperties false`);
  }
  assert.ok(!("minLength" in s) && !("maxLength" in s), `${where}: no length limits`);
  for (const [k, v] of Object.entries(s)) if (k !== "enum") assertStrict(v, `${where}.${k}`);
}

Deno.test("toOpenAITools() default stays Chat Completions, unchanged", () => {
  const entries: OpenAI.Chat.Completions.ChatCompletionFunctionTool[] = toOpenAITools(tools);
  for (const [i, tool] of tools.entries()) {
    assert.deepEqual(entries[i], {
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
    });
  }
  assert.deepEqual(toOpenAITools(tools, { api: "chat" }), entries);
  assert.deepEqual(toOpenAITools(tools, { strict: false }), entries);
});

Deno.test("toOpenAITools() with api responses gives Responses function tools with name and strict on top", () => {
  const entries: OpenAI.Responses.FunctionTool[] = toOpenAITools(tools, { api: "responses" });
  const union: OpenAI.Responses.Tool[] = toOpenAITools(tools, { api: "responses" });
  assert.equal(union.length, 4);
  for (const [i, tool] of tools.entries()) {
    assert.deepEqual(entries[i], {
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.inputSchema,
      strict: false,
    });
  }
});

Deno.test("toOpenAITools() with strict gives strict-mode schemas for either API", () => {
  const chat = toOpenAITools(tools, { strict: true });
  const responses = toOpenAITools(tools, { api: "responses", strict: true });
  for (const [i, tool] of tools.entries()) {
    assert.equal(chat[i]!.function.strict, true);
    assert.equal(responses[i]!.strict, true);
    assert.deepEqual(chat[i]!.function.parameters, responses[i]!.parameters);
    assertStrict(responses[i]!.parameters, tool.name);
  }
  const write = responses[2]!.parameters;
  assert.deepEqual(write.required, ["key", "description", "content", "overwrite"]);
  const props = write.properties as Record<string, { type: unknown; pattern?: string }>;
  assert.deepEqual(props.overwrite!.type, ["boolean", "null"]);
  assert.equal(props.key!.type, "string");
  assert.equal(props.key!.pattern, "^[A-Za-z0-9._=-]+$");
  const list = responses[0]!.parameters;
  assert.deepEqual(list.required, ["prefix", "after"]);
  // The tool itself is unchanged.
  assert.deepEqual(tools[2]!.inputSchema.required, ["key", "description", "content"]);
});

Deno.test("toOpenAITools() strict handles nested objects, arrays, enums and unions of a tool of your own", () => {
  const custom = defineTool({
    name: "custom",
    description: "A tool of your own.",
    inputSchema: {
      type: "object",
      properties: {
        mode: { type: "string", enum: ["a", "b"] },
        tags: { type: "array", items: { type: "object", properties: { t: { type: "string" } } } },
        either: { anyOf: [{ type: "string" }, { type: "number" }] },
        many: { type: ["string", "number"] },
      },
      required: ["mode"],
    },
    expose: {},
    run: () => ({ isError: false, content: "" }),
  });
  const [entry] = toOpenAITools([custom], { api: "responses", strict: true });
  assertStrict(entry!.parameters);
  const p = entry!.parameters.properties as Record<string, Record<string, unknown>>;
  assert.deepEqual(p.mode, { type: "string", enum: ["a", "b"] });
  assert.deepEqual(p.tags!.type, ["array", "null"]);
  assert.deepEqual((p.tags!.items as Record<string, unknown>).required, ["t"]);
  assert.deepEqual(p.either, {
    anyOf: [{ anyOf: [{ type: "string" }, { type: "number" }] }, { type: "null" }],
  });
  assert.deepEqual(p.many!.type, ["string", "number", "null"]);
});

Deno.test("the memory tools accept every strict-mode call: all fields present, null for the omitted", async () => {
  const store = new FakeStore();
  const t = memoryTools(store);
  const calls: [string, unknown][] = [
    ["memory_list", { prefix: null, after: null }],
    ["memory_write", { key: "k", description: "d", content: "c", overwrite: null }],
    ["memory_read", { key: "k" }],
    ["memory_write", { key: "k", description: "d", content: "c2", overwrite: true }],
    ["memory_list", { prefix: "k", after: null }],
    ["memory_delete", { key: "k" }],
  ];
  for (const [name, args] of calls) {
    const r = await runTool(t, name, JSON.stringify(args));
    assert.equal(r.isError, false, `${name}: ${r.content}`);
  }
});

Deno.test("toOpenAITools() refuses bad options with ConfigError", () => {
  assert.throws(() => toOpenAITools(tools, { api: "assistants" } as never), /"api" must be/);
  assert.throws(() => toOpenAITools(tools, { strict: "yes" } as never), /"strict" must be/);
  assert.throws(() => toOpenAITools(tools, { mode: 1 } as never), /unknown option "mode"/);
});

Deno.test("runTool() dispatches by name and refuses an invented name, listing the tools", async () => {
  const store = new FakeStore();
  const t = memoryTools(store);
  const r = await runTool(t, "memory_search", { query: "x" });
  assert.deepEqual(r, {
    isError: true,
    content: 'Refused: there is no tool named "memory_search". The tools are: memory_list, ' +
      "memory_read, memory_write, memory_delete.",
  });
  assert.equal((await runTool(t, 42, {})).isError, true);
  assert.match((await runTool(t, "__proto__", {})).content, /no tool named "__proto__"/);
  assert.match((await runTool([], "x", {})).content, /No tools are available/);
  assert.deepEqual(store.calls, []);
  const listed = await runTool(t, "memory_list", "{}", { toolCallId: "call_1" });
  assert.equal(listed.content, "No memories are saved yet.");
  assert.throws(() => runTool("nope" as never, "x", {}), /expected an array/);
});

function completion(message: Record<string, unknown>, finish: string): unknown {
  return {
    id: `chatcmpl_${crypto.randomUUID().slice(0, 8)}`,
    object: "chat.completion",
    created: 0,
    model: "gpt-5",
    choices: [{
      index: 0,
      message: { role: "assistant", content: null, ...message },
      finish_reason: finish,
      logprobs: null,
    }],
  };
}

function functionCall(id: string, name: string, args: unknown) {
  return { id, type: "function", function: { name, arguments: JSON.stringify(args) } };
}

Deno.test("the Chat Completions example runs the tools the model calls and answers an invented one", async () => {
  const store = new FakeStore();
  const script = scriptedFetch([
    completion({
      tool_calls: [
        functionCall("call_1", "memory_write", {
          key: "user.units",
          description: "Preferred units",
          content: "metric",
          overwrite: null,
        }),
        functionCall("call_2", "memory_search", { query: "units" }),
      ],
    }, "tool_calls"),
    completion({ content: "Noted." }, "stop"),
  ]);
  assert.equal(await chatCompletions(client(script), store, "I prefer metric units."), "Noted.");
  assert.equal(store.entries.get("user.units")?.content, "metric");
  const first = script.requests[0]!.body as {
    model: string;
    tools: { function: { strict: boolean } }[];
  };
  assert.equal(first.model, "gpt-5");
  assert.ok(first.tools.every((t) => t.function.strict === true));
  const second = script.requests[1]!.body as {
    messages: { role: string; tool_call_id?: string; content: string }[];
  };
  const results = second.messages.filter((m) => m.role === "tool");
  assert.deepEqual(results.map((m) => m.tool_call_id), ["call_1", "call_2"]);
  assert.equal(results[0]!.content, 'Saved new memory "user.units".');
  assert.match(results[1]!.content, /no tool named "memory_search"\. The tools are: memory_list/);
});

Deno.test("the Responses example runs function calls and sends their outputs back by call_id", async () => {
  const store = new FakeStore();
  store.seed("user.name", "What the user wants to be called", "Sam");
  const script = scriptedFetch([
    response([{
      type: "function_call",
      id: "fc_1",
      call_id: "call_a",
      name: "memory_read",
      arguments: JSON.stringify({ key: "user.name" }),
      status: "completed",
    }, {
      type: "function_call",
      id: "fc_2",
      call_id: "call_b",
      name: "memory_write",
      arguments: JSON.stringify({
        key: "user.name",
        description: "Name",
        content: "Samuel",
        overwrite: true,
      }),
      status: "completed",
    }]),
    response([{
      type: "message",
      id: "msg_1",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "Hello Samuel.", annotations: [] }],
    }]),
  ]);
  assert.equal(await chatResponses(client(script), store, "Call me Samuel."), "Hello Samuel.");
  assert.equal(store.entries.get("user.name")?.content, "Samuel");
  const first = script.requests[0]!.body as {
    tools: Record<string, unknown>[];
    instructions: string;
  };
  assert.deepEqual(Object.keys(first.tools[0]!), [
    "type",
    "name",
    "description",
    "parameters",
    "strict",
  ]);
  assert.match(first.instructions, /"user\.name": What the user wants to be called/);
  const second = script.requests[1]!.body as {
    previous_response_id: string;
    input: { type: string; call_id: string; output: string }[];
  };
  assert.match(second.previous_response_id, /^resp_/);
  assert.deepEqual(second.input.map((i) => [i.type, i.call_id]), [
    ["function_call_output", "call_a"],
    ["function_call_output", "call_b"],
  ]);
  assert.match(second.input[0]!.output, /\| Sam$/m);
  assert.equal(second.input[1]!.output, 'Saved memory "user.name", replacing what it held.');
});
