/**
 * The tools' face: the model-facing memory tools over one `Store`, the system note with the
 * start-of-run index, `runTool` to answer a model's call, the adapters to the Anthropic, OpenAI and
 * AI SDK tool formats, and the handlers of Claude's own memory tool.
 *
 * @example The tools a model calls, answered by the harness
 * ```ts
 * import { memoryTools, openFileStore, runTool, Scope } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const store = await openFileStore({ dir });
 * const tools = memoryTools(store, { scope: new Scope() });
 * const input = { key: "user.units", description: "Preferred units", content: "metric" };
 * assert.equal((await runTool(tools, "memory_write", input)).isError, false);
 * // A second write of the key is an answer the model can act on, not an exception.
 * const again = await runTool(tools, "memory_write", input);
 * assert.equal(again.isError, true);
 * assert.match(again.content, /Preferred units/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */

export {
  defineTool,
  type ExposeSpec,
  type JsonSchemaObject,
  type Tool,
  type ToolInputSchema,
  type ToolResult,
  type ToolRunOptions,
  type ToolSpec,
} from "./tool.ts";
export {
  DEFAULT_LIST_CHARS,
  type HybridSearchOptions,
  memoryTools,
  type MemoryToolsOptions,
  MIN_LIST_CHARS,
} from "./memory_tools.ts";
export { DEFAULT_NOTE_CHARS, memorySystemNote, type SystemNoteOptions } from "./system_note.ts";
export {
  type AnthropicRunnableTool,
  type AnthropicRunnableToolsOptions,
  type AnthropicTool,
  type AnthropicToolRunContext,
  toAnthropicRunnableTools,
  toAnthropicTools,
} from "./anthropic.ts";
export {
  type OpenAIFunction,
  type OpenAIResponsesTool,
  type OpenAITool,
  type OpenAIToolsOptions,
  toOpenAITools,
} from "./openai.ts";
export { runTool } from "./run_tool.ts";
export { type SearchMatch, searchMemories, type SearchResult } from "./search.ts";
export {
  type AnthropicMemoryHandlers,
  anthropicMemoryHandlers,
  type AnthropicMemoryHandlersOptions,
  type MemoryCreateCommand,
  type MemoryDeleteCommand,
  type MemoryInsertCommand,
  type MemoryRenameCommand,
  type MemoryStrReplaceCommand,
  type MemoryViewCommand,
} from "./claude_memory/handlers.ts";
export { claudeMemoryKey, claudeMemoryPath } from "./claude_memory/paths.ts";
export {
  type AISDKModelOutput,
  type AISDKTool,
  type AISDKToolsOptions,
  toAISDKTools,
} from "./ai_sdk.ts";
