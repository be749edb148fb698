/**
 * Tools in the format of the Anthropic Messages API.
 *
 * @module
 */

import type { JsonSchemaObject, Tool } from "./tool.ts";
import { checkTools, schemaOf } from "./_adapt.ts";

/** One entry of the Messages API `tools` parameter (a custom client tool). */
export interface AnthropicTool {
  /** The name the model calls it by, in `tool_use` blocks. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** The JSON Schema of the tool's input. */
  input_schema: JsonSchemaObject;
}

/**
 * Converts tools to Messages API `tools` entries: `{ name, description, input_schema }`. Answer a
 * `tool_use` block by running the tool named in it on `block.input` and sending back a
 * `tool_result` block with `content` and `is_error` from the result.
 *
 * @example
 * ```ts
 * import { memoryTools, openFileStore, toAnthropicTools } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const tools = toAnthropicTools(memoryTools(await openFileStore({ dir })));
 * assert.equal(tools[0]?.name, "memory_list");
 * assert.equal(tools[0]?.input_schema.type, "object");
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @param tools The tools, with distinct names.
 * @returns One entry per tool, each with its own copy of the schema.
 * @throws {ConfigError} when `tools` is not a list of tools with distinct names.
 */
export function toAnthropicTools(tools: readonly Tool[]): AnthropicTool[] {
  return checkTools("the Anthropic API", tools).map(toAnthropicTool);
}

function toAnthropicTool(tool: Tool): AnthropicTool {
  return { name: tool.name, description: tool.description, input_schema: schemaOf(tool) };
}
