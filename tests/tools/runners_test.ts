// One turn's tool calls through the SDKs' own runners: the Anthropic tool runner and the AI SDK's
// generateText run a turn's calls at once, and the memory tools of one scope apply them in the
// order the model gave them. Plus the adapter traps: toAnthropicTools() handed to the tool runner
// works, and toAISDKTools() refuses missing or bad options with ConfigError.

import assert from "node:assert/strict";
import { generateText, jsonSchema, stepCountIs } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import {
  ConfigError,
  memoryTools,
  openFileStore,
  Scope,
  type Store,
  toAISDKTools,
  toAnthropicRunnableTools,
  toAnthropicTools,
} from "../../mod.ts";
import {
  anthropicMessage,
  type ScriptedFetch,
  scriptedFetch,
  type ToolResultBlock,
  toolRunnerTurn,
  toolUse,
} from "../_lib/sdk_fetch.ts";
import { tempDir } from "../_lib/temp_dir.ts";

async function withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
  await using dir = await tempDir();
  return await fn(await openFileStore({ dir: dir.path }));
}

// One turn: write a key, read it, create another and delete it, all in one reply.
function oneTurn(): ScriptedFetch {
  return scriptedFetch([
    anthropicMessage([
      toolUse("w", "memory_write", { key: "user.units", description: "Units", content: "metric" }),
      toolUse("r", "memory_read", { key: "user.units" }),
      toolUse("c", "memory_write", { key: "tmp", description: "Scratch", content: "x" }),
      toolUse("d", "memory_delete", { key: "tmp" }),
    ], "tool_use"),
    anthropicMessage([{ type: "text", text: "done" }]),
  ]);
}

function runTurn(tools: unknown[], script: ScriptedFetch): Promise<ToolResultBlock[]> {
  return toolRunnerTurn(script, tools);
}

Deno.test("toAnthropicRunnableTools(): a turn's write then read of one key, and create then delete, apply in order", async () => {
  await withStore(async (store) => {
    const tools = memoryTools(store, { scope: new Scope() });
    const [write, read, create, del] = await runTurn(toAnthropicRunnableTools(tools), oneTurn());
    assert.equal(write!.content, 'Saved new memory "user.units".');
    assert.equal(read!.is_error, undefined, read!.content);
    assert.match(read!.content, /\| metric/);
    assert.equal(create!.content, 'Saved new memory "tmp".');
    assert.equal(del!.content, 'Deleted memory "tmp".');
    assert.deepEqual((await store.list()).map((i) => i.key), ["user.units"]);
  });
});

Deno.test("toAnthropicRunnableTools({ ordered: false }): the same turn races, which is what ordering prevents", async () => {
  await withStore(async (store) => {
    const tools = memoryTools(store, { scope: new Scope() });
    const results = await runTurn(toAnthropicRunnableTools(tools, { ordered: false }), oneTurn());
    // The read runs while the write's fsync is under way, so it misses the write.
    assert.equal(results[1]!.is_error, true);
    assert.match(results[1]!.content, /No memory has key "user\.units"/);
  });
});

Deno.test("toAnthropicTools() handed to the tool runner runs the tools too, in order", async () => {
  await withStore(async (store) => {
    const plain = toAnthropicTools(memoryTools(store, { scope: new Scope() }));
    // What the API receives is the plain entry: run and parse are not enumerable.
    assert.deepEqual(Object.keys(plain[0]!), ["name", "description", "input_schema"]);
    assert.deepEqual(Object.keys(JSON.parse(JSON.stringify(plain[0]))), [
      "name",
      "description",
      "input_schema",
    ]);
    const script = oneTurn();
    const [write, read] = await runTurn(plain, script);
    assert.equal(write!.content, 'Saved new memory "user.units".');
    assert.match(read!.content, /\| metric/);
    const sent = script.requests[0]!.body as { tools: Record<string, unknown>[] };
    assert.deepEqual(Object.keys(sent.tools[0]!).sort(), ["description", "input_schema", "name"]);
  });
});

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

Deno.test({
  name: "toAISDKTools(): generateText's concurrent calls of one step apply in order",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await withStore(async (store) => {
      const model = new MockLanguageModelV4({
        doGenerate: [
          {
            content: [
              ["w", "memory_write", { key: "k", description: "K", content: "v" }],
              ["r", "memory_read", { key: "k" }],
            ].map(([toolCallId, toolName, input]) => ({
              type: "tool-call" as const,
              toolCallId: toolCallId as string,
              toolName: toolName as string,
              input: JSON.stringify(input),
            })),
            finishReason: { unified: "tool-calls" as const, raw: "tool_use" },
            usage: USAGE,
            warnings: [],
          },
          {
            content: [{ type: "text", text: "ok" }],
            finishReason: { unified: "stop", raw: "end_turn" },
            usage: USAGE,
            warnings: [],
          },
        ],
      });
      const result = await generateText({
        model,
        prompt: "x",
        tools: toAISDKTools(memoryTools(store, { scope: new Scope() }), { jsonSchema }),
        stopWhen: stepCountIs(3),
      });
      const outputs = result.steps[0]!.toolResults.map((r) => r.output as { content: string });
      assert.match(outputs[1]!.content, /\| v/);
    });
  },
});

Deno.test("toAISDKTools() without options, or with a bad jsonSchema, throws ConfigError", async () => {
  await withStore((store) => {
    const tools = memoryTools(store);
    const refused = (f: () => unknown, message: RegExp) =>
      assert.throws(f, (e) => e instanceof ConfigError && message.test(e.message));
    refused(() => toAISDKTools(tools, undefined as never), /"jsonSchema" is required/);
    refused(() => toAISDKTools(tools, {} as never), /"jsonSchema" is required/);
    refused(() => toAISDKTools(tools, null as never), /expected an object/);
    refused(() => toAISDKTools(tools, { jsonSchema: 5 } as never), /"jsonSchema" must be/);
    refused(
      () =>
        toAISDKTools(tools, {
          jsonSchema: () => {
            throw new TypeError("no");
          },
        }),
      /"jsonSchema" threw TypeError/,
    );
    refused(() => toAISDKTools(tools, { jsonSchema, extra: 1 } as never), /unknown option "extra"/);
    return Promise.resolve();
  });
});
