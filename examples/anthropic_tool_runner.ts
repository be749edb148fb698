/**
 * The memory tools in the Anthropic SDK's tool runner, which calls the model, runs the tools it
 * asks for and sends their results back until it stops.
 *
 * Run: `ANTHROPIC_API_KEY=... deno run -A examples/anthropic_tool_runner.ts "I prefer metric units."`
 *
 * @module
 */

import Anthropic from "@anthropic-ai/sdk";
import { ToolError } from "@anthropic-ai/sdk/lib/tools/ToolError";
import {
  memorySystemNote,
  memoryTools,
  openFileStore,
  Scope,
  type Store,
  toAnthropicRunnableTools,
} from "@agentmem/memory";

/**
 * One user turn with memory: the model may list, read, write and delete memories as it answers.
 *
 * @param client The Anthropic client.
 * @param store The memory store.
 * @param prompt What the user says.
 * @returns The model's final text.
 */
export async function chat(client: Anthropic, store: Store, prompt: string): Promise<string> {
  const scope = new Scope(); // one per run; journal scope.snapshot() to resume it later
  const tools = memoryTools(store, { scope });
  const final = await client.beta.messages.toolRunner({
    model: "claude-sonnet-4-6",
    max_tokens: 1024,
    system: `You are a helpful assistant.\n\n${await memorySystemNote(store)}`,
    messages: [{ role: "user", content: prompt }],
    // With the SDK's ToolError, a refusal reaches the model as exactly its text, is_error: true.
    tools: toAnthropicRunnableTools(tools, { ToolError }),
  });
  return final.content.flatMap((block) => block.type === "text" ? [block.text] : []).join("");
}

if (import.meta.main) {
  const store = await openFileStore({ dir: "./.agentmem" });
  console.log(await chat(new Anthropic(), store, Deno.args.join(" ") || "I prefer metric units."));
}
