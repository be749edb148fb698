/**
 * The memory tools in the AI SDK's multi-step `generateText`: the SDK runs the tools and calls the
 * model again until it answers in text or `stopWhen` says stop.
 *
 * Run (through the AI Gateway): `AI_GATEWAY_API_KEY=... deno run -A examples/ai_sdk.ts "I prefer metric units."`
 *
 * @module
 */

import { generateText, jsonSchema, type LanguageModel, stepCountIs } from "ai";
import {
  memorySystemNote,
  memoryTools,
  openFileStore,
  Scope,
  type Store,
  toAISDKTools,
} from "@agentmem/memory";

/**
 * One user turn with memory, in up to five steps.
 *
 * @param model The model: a provider's model object, or a Gateway id like `"openai/gpt-5"`.
 * @param store The memory store.
 * @param prompt What the user says.
 * @returns The model's final text.
 */
export async function chat(model: LanguageModel, store: Store, prompt: string): Promise<string> {
  const tools = memoryTools(store, { scope: new Scope() });
  const result = await generateText({
    model,
    system: `You are a helpful assistant.\n\n${await memorySystemNote(store)}`,
    prompt,
    tools: toAISDKTools(tools, { jsonSchema }),
    stopWhen: stepCountIs(5),
  });
  return result.text;
}

if (import.meta.main) {
  const store = await openFileStore({ dir: "./.agentmem" });
  console.log(await chat("openai/gpt-5", store, Deno.args.join(" ") || "I prefer metric units."));
}
