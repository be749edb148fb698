// The AI SDK example (examples/ai_sdk.ts, as docs/tools.md shows it) run by the real `generateText` over the SDK's own mock model: a
// multi-step run with stopWhen, the tools' results and refusals reaching the model each step.

import assert from "node:assert/strict";
import { MockLanguageModelV4 } from "ai/test";
import { chat } from "../../examples/ai_sdk.ts";
import { FakeStore } from "../_lib/fake_store.ts";

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

function toolCalls(...calls: [string, string, unknown][]) {
  return {
    content: calls.map(([toolCallId, toolName, input]) => ({
      type: "tool-call" as const,
      toolCallId,
      toolName,
      input: JSON.stringify(input),
    })),
    finishReason: { unified: "tool-calls" as const, raw: "tool_use" },
    usage: USAGE,
    warnings: [],
  };
}

Deno.test({
  name: "the AI SDK example runs several steps: list, then write, then answer",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const store = new FakeStore();
    store.seed("user.units", "Preferred units", "imperial");
    const model = new MockLanguageModelV4({
      doGenerate: [
        toolCalls(["c1", "memory_list", {}], ["c2", "memory_write", {
          key: "user.units",
          description: "Preferred units",
          content: "metric",
        }]),
        toolCalls(["c3", "memory_read", { key: "user.units" }]),
        toolCalls(["c4", "memory_write", {
          key: "user.units",
          description: "Preferred units",
          content: "metric",
          overwrite: true,
        }]),
        {
          content: [{ type: "text", text: "Switched you to metric." }],
          finishReason: { unified: "stop", raw: "end_turn" },
          usage: USAGE,
          warnings: [],
        },
      ],
    });
    assert.equal(await chat(model, store, "I prefer metric units."), "Switched you to metric.");
    assert.equal(model.doGenerateCalls.length, 4);
    assert.equal(store.entries.get("user.units")?.content, "metric");
    const outputs = model.doGenerateCalls.at(-1)!.prompt.flatMap((m) =>
      m.role === "tool"
        ? m.content.flatMap((p) => p.type === "tool-result" ? [[p.toolCallId, p.output]] : [])
        : []
    ) as [string, { type: string; value: string }][];
    assert.deepEqual(outputs.map(([id, o]) => [id, o.type]), [
      ["c1", "text"],
      ["c2", "error-text"],
      ["c3", "text"],
      ["c4", "text"],
    ]);
    assert.match(outputs[0]![1].value, /"user\.units": Preferred units/);
    assert.match(outputs[1]![1].value, /already exists/);
    const system = model.doGenerateCalls[0]!.prompt.find((m) => m.role === "system");
    assert.match(String(system?.content), /# Memory/);
  },
});

Deno.test({
  name: "the AI SDK example stops at five steps",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const store = new FakeStore();
    const model = new MockLanguageModelV4({
      doGenerate: () => Promise.resolve(toolCalls(["c", "memory_list", {}])),
    });
    assert.equal(await chat(model, store, "loop"), "");
    assert.equal(model.doGenerateCalls.length, 5);
  },
});
