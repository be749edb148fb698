/**
 * Tools in the format of the OpenAI Chat Completions API.
 *
 * @module
 */

import type { JsonSchemaObject, Tool } from "./tool.ts";
import { checkTools, schemaOf } from "./_adapt.ts";

/** One entry of the Chat Completions `tools` parameter (a function tool). */
export interface OpenAITool {
  /** Always `"function"`. */
  type: "function";
  /** The function the model may call. */
  function: {
    /** The name the model calls it by. */
    name: string;
    /** What the function does, for the model. */
    description: string;
    /** The JSON Schema of the function's arguments. */
    parameters: JsonSchemaObject;
  };
}

/**
 * Converts tools to Chat Completions `tools` entries:
 * `{ type: "function", function: { name, description, parameters } }`. Answer a tool call by
 * running the tool named in `call.function.name` on `call.function.arguments` (the JSON text
 * as sent; `run` parses it) and sending back a `tool` message with the result's `content`.
 *
 * @example
 * ```ts
 * import { memoryTools, openFileStore, toOpenAITools } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const tools = toOpenAITools(memoryTools(await openFileStore({ dir })));
 * assert.equal(tools[1]?.type, "function");
 * assert.equal(tools[1]?.function.name, "memory_read");
 * assert.deepEqual(tools[1]?.function.parameters.required, ["key"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @param tools The tools, with distinct names.
 * @returns One entry per tool, each with its own copy of the schema.
 * @throws {ConfigError} when `tools` is not a list of tools with distinct names.
 */
export function toOpenAITools(tools: readonly Tool[]): OpenAITool[] {
  return checkTools("the OpenAI API", tools).map(toOpenAITool);
}

function toOpenAITool(tool: Tool): OpenAITool {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: schemaOf(tool) },
  };
}
