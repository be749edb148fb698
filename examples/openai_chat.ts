/**
 * The memory tools in an OpenAI Chat Completions loop, dispatched with `runTool`.
 *
 * Run: `OPENAI_API_KEY=... deno run -A examples/openai_chat.ts "I prefer metric units."`
 *
 * @module
 */

import OpenAI from "openai";
import {
  memorySystemNote,
  memoryTools,
  openFileStore,
  runTool,
  Scope,
  type Store,
  toOpenAITools,
} from "@agentmem/memory";

/**
 * One user turn with memory: calls the model until it answers without a tool call.
 *
 * @param openai The OpenAI client.
 * @param store The memory store.
 * @param prompt What the user says.
 * @returns The model's final text.
 */
export async function chat(openai: OpenAI, store: Store, prompt: string): Promise<string> {
  const tools = memoryTools(store, { scope: new Scope() });
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: "system", content: `You are a helpful assistant.\n\n${await memorySystemNote(store)}` },
    { role: "user", content: prompt },
  ];
  for (let turn = 0; turn < 10; turn++) {
    const completion = await openai.chat.completions.create({
      model: "gpt-5",
      messages,
      tools: toOpenAITools(tools, { strict: true }),
    });
    const message = completion.choices[0]!.message;
    messages.push(message);
    if (!message.tool_calls?.length) return message.content ?? "";
    for (const call of message.tool_calls) {
      if (call.type !== "function") continue;
      // runTool parses the arguments' JSON text and refuses a tool name the model invented.
      const result = await runTool(tools, call.function.name, call.function.arguments, {
        toolCallId: call.id,
      });
      messages.push({ role: "tool", tool_call_id: call.id, content: result.content });
    }
  }
  return "(stopped after 10 model calls)";
}

if (import.meta.main) {
  const store = await openFileStore({ dir: "./.agentmem" });
  console.log(await chat(new OpenAI(), store, Deno.args.join(" ") || "I prefer metric units."));
}
