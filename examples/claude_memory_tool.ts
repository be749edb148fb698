/**
 * Claude's native memory tool (`memory_20250818`) kept in an agentmem store: the SDK's
 * `betaMemoryTool` with `anthropicMemoryHandlers`, run by the SDK's tool runner.
 *
 * Run: `ANTHROPIC_API_KEY=... deno run -A examples/claude_memory_tool.ts "I prefer metric units."`
 *
 * @module
 */

import Anthropic from "@anthropic-ai/sdk";
import { betaMemoryTool } from "@anthropic-ai/sdk/helpers/beta/memory";
import { anthropicMemoryHandlers, openFileStore, Scope, type Store } from "@agentmem/memory";

/**
 * One user turn in which Claude may view, create and edit files under `/memories`.
 *
 * @param client The Anthropic client.
 * @param store The memory store: each file under `/memories` is a memory (`/memories/user/prefs.md`
 *   is the key `user=prefs`; see `claudeMemoryKey`).
 * @param prompt What the user says.
 * @returns The model's final text.
 */
export async function chat(client: Anthropic, store: Store, prompt: string): Promise<string> {
  const memory = betaMemoryTool(anthropicMemoryHandlers(store, { scope: new Scope() }));
  const final = await client.beta.messages.toolRunner({
    model: "claude-sonnet-4-6",
    max_tokens: 1024,
    betas: ["context-management-2025-06-27"],
    messages: [{ role: "user", content: prompt }],
    tools: [memory],
  });
  return final.content.flatMap((block) => block.type === "text" ? [block.text] : []).join("");
}

if (import.meta.main) {
  // Edits are revision-checked on any store, so a default file store loses none.
  const store = await openFileStore({ dir: "./.agentmem" });
  console.log(await chat(new Anthropic(), store, Deno.args.join(" ") || "I prefer metric units."));
}
