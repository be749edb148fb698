/**
 * The memory tools in an OpenAI Responses API loop, dispatched with `runTool`.
 *
 * Run: `OPENAI_API_KEY=... deno run -A examples/openai_responses.ts "I prefer metric units."`
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
 * One user turn with memory: calls the model until it answers without a function call.
 *
 * @param openai The OpenAI client.
 * @param store The memory store.
 * @param prompt What the user says.
 * @returns The model's final text.
 */
export async function chat(openai: OpenAI, store: Store, prompt: string): Promise<string> {
  const tools = memoryTools(store, { scope: new Scope() });
  // Built once per run: the same instructions every turn keep the prompt cache, and the index
  // stays the start-of-run index (memory_list shows what changed since).
  const instructions = `You are a helpful assistant.\n\n${await memorySystemNote(store)}`;
  const responseTools = toOpenAITools(tools, { api: "responses", strict: true });
  let input: OpenAI.Responses.ResponseInput = [{ role: "user", content: prompt }];
  let previous: string | undefined;
  for (let turn = 0; turn < 10; turn++) {
    const response = await openai.responses.create({
      model: "gpt-5",
      instructions,
      input,
      tools: responseTools,
      ...(previous === undefined ? {} : { previous_response_id: previous }),
    });
    const calls = response.output.filter((item) => item.type === "function_call");
    if (calls.length === 0) return response.output_text;
    input = [];
    for (const call of calls) {
      const result = await runTool(tools, call.name, call.arguments, { toolCallId: call.call_id });
      input.push({ type: "function_call_output", call_id: call.call_id, output: result.content });
    }
    previous = response.id;
  }
  return "(stopped after 10 model calls)";
}

if (import.meta.main) {
  const store = await openFileStore({ dir: "./.agentmem" });
  console.log(await chat(new OpenAI(), store, Deno.args.join(" ") || "I prefer metric units."));
}
