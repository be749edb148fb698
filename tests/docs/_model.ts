// Preloaded (`deno run --preload`) into a docs block that calls a model API: a scripted model in
// place of the Anthropic, OpenAI and AI Gateway endpoints, so that the block runs as printed, with
// the real SDK, and no network. The model asks for one memory tool call, then answers in text.

import { MockLanguageModelV4 } from "ai/test";
import { anthropicMessage, openaiResponse } from "../_lib/sdk_fetch.ts";

const WRITE = { key: "user.units", description: "The units the user prefers", content: "metric" };
const CLAUDE_CREATE = {
  command: "create",
  path: "/memories/units.md",
  file_text: "# The units the user prefers\nmetric\n",
};
const json = (body: unknown) =>
  new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });

// Anthropic Messages: a tool call first, text once a tool result came back.
function messages(body: { tools?: { name: string }[]; messages: { content: unknown }[] }) {
  const answered = body.messages.some((m) =>
    Array.isArray(m.content) && m.content.some((b) => b?.type === "tool_result")
  );
  const names = (body.tools ?? []).map((t) => t.name);
  const content = answered || names.length === 0
    ? [{ type: "text", text: "Noted." }]
    : names.includes("memory_write")
    ? [{ type: "tool_use", id: "toolu_1", name: "memory_write", input: WRITE }]
    : [{ type: "tool_use", id: "toolu_1", name: "memory", input: CLAUDE_CREATE }];
  return anthropicMessage(content, content[0]!.type === "tool_use" ? "tool_use" : "end_turn");
}

// OpenAI Chat Completions.
function chat(body: { messages: { role: string }[] }) {
  const answered = body.messages.at(-1)?.role === "tool";
  const message = answered ? { role: "assistant", content: "Noted.", refusal: null } : {
    role: "assistant",
    content: null,
    refusal: null,
    tool_calls: [{
      id: "call_1",
      type: "function",
      function: { name: "memory_write", arguments: JSON.stringify(WRITE) },
    }],
  };
  return {
    id: "chatcmpl_1",
    object: "chat.completion",
    created: 0,
    model: "gpt-5",
    choices: [{
      index: 0,
      message,
      finish_reason: answered ? "stop" : "tool_calls",
      logprobs: null,
    }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

// OpenAI Responses.
function responses(body: { input: { type?: string }[] | string }) {
  const answered = Array.isArray(body.input) &&
    body.input.some((i) => i.type === "function_call_output");
  const output = answered
    ? [{
      type: "message",
      id: "msg_1",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "Noted.", annotations: [] }],
    }]
    : [{
      type: "function_call",
      id: "fc_1",
      call_id: "call_1",
      name: "memory_write",
      arguments: JSON.stringify(WRITE),
      status: "completed",
    }];
  return openaiResponse(output);
}

const realFetch = globalThis.fetch;
globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
  const request = new Request(input, init);
  const { hostname, pathname } = new URL(request.url);
  if (hostname !== "api.anthropic.com" && hostname !== "api.openai.com") {
    return await realFetch(input, init);
  }
  const body = JSON.parse(await request.text());
  if (pathname.endsWith("/messages")) return json(messages(body));
  if (pathname.endsWith("/chat/completions")) return json(chat(body));
  if (pathname.endsWith("/responses")) return json(responses(body));
  return new Response(`no scripted answer for ${pathname}`, { status: 404 });
};

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

// The AI SDK's string model ids ("openai/gpt-5") go to its default provider: this one.
(globalThis as { AI_SDK_DEFAULT_PROVIDER?: unknown }).AI_SDK_DEFAULT_PROVIDER = {
  specificationVersion: "v4",
  languageModel: () =>
    new MockLanguageModelV4({
      doGenerate: (options) => {
        const answered = options.prompt.some((m) => m.role === "tool");
        return Promise.resolve(
          answered
            ? {
              content: [{ type: "text", text: "Noted." }],
              finishReason: { unified: "stop", raw: "end_turn" },
              usage: USAGE,
              warnings: [],
            }
            : {
              content: [{
                type: "tool-call",
                toolCallId: "call_1",
                toolName: "memory_write",
                input: JSON.stringify(WRITE),
              }],
              finishReason: { unified: "tool-calls", raw: "tool_use" },
              usage: USAGE,
              warnings: [],
            },
        );
      },
    }),
};
