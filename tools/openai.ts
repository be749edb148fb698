/**
 * Tools in the formats of the OpenAI Chat Completions and Responses APIs.
 *
 * @module
 */

import { quote } from "../store/text.ts";
import type { JsonSchemaObject, Tool } from "./tool.ts";
import { checkTools, schemaOf } from "./_adapt.ts";
import { readToolOptions } from "./_options.ts";
import { strictSchema } from "./_strict.ts";

/** One entry of the Chat Completions `tools` parameter (a function tool). */
export interface OpenAITool {
  /** Always `"function"`. */
  type: "function";
  /** The function the model may call. */
  function: OpenAIFunction;
}

/** The function of a Chat Completions function tool. */
export interface OpenAIFunction {
  /** The name the model calls it by. */
  name: string;
  /** What the function does, for the model. */
  description: string;
  /** The JSON Schema of the function's arguments. */
  parameters: JsonSchemaObject;
  /** `true` with `{ strict: true }`: the model's arguments always fit `parameters`. */
  strict?: boolean;
}

/** One entry of the Responses API `tools` parameter (a function tool). */
export interface OpenAIResponsesTool {
  /** Always `"function"`. */
  type: "function";
  /** The name the model calls it by. */
  name: string;
  /** What the function does, for the model. */
  description: string;
  /** The JSON Schema of the function's arguments. */
  parameters: JsonSchemaObject;
  /** Whether the model's arguments always fit `parameters`; always given, as `false` or `true`. */
  strict: boolean;
}

/** Options of `toOpenAITools`. */
export interface OpenAIToolsOptions {
  /** `"chat"` (the default) for Chat Completions, `"responses"` for the Responses API. */
  readonly api?: "chat" | "responses" | undefined;
  /**
   * Schemas that meet OpenAI's strict-mode rules (every property required,
   * `additionalProperties: false`, an optional field as a `null` union), marked `strict: true`.
   * The memory tools read `null` for an optional field as omitted. Default `false`.
   */
  readonly strict?: boolean | undefined;
}

/**
 * Converts tools to Chat Completions `tools` entries:
 * `{ type: "function", function: { name, description, parameters } }` (plus `strict: true` and a
 * strict-mode schema with `{ strict: true }`). Answer a tool call with `runTool(tools,
 * call.function.name, call.function.arguments)` (the arguments' JSON text as sent; `run` parses
 * it) and send back a `tool` message with the result's `content`.
 *
 * @example
 * ```ts
 * import { memoryTools, openFileStore, toOpenAITools } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const tools = memoryTools(await openFileStore({ dir }));
 * const chat = toOpenAITools(tools);
 * assert.equal(chat[1]?.function.name, "memory_read");
 * assert.deepEqual(chat[1]?.function.parameters.required, ["key"]);
 * const strict = toOpenAITools(tools, { strict: true });
 * assert.deepEqual(strict[2]?.function.parameters.required, [
 *   "key", "description", "content", "overwrite",
 * ]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @param tools The tools, with distinct names.
 * @param options `api: "chat"` (or none) and `strict`.
 * @returns One entry per tool, each with its own copy of the schema.
 * @throws {ConfigError} when `tools` is not a list of tools with distinct names, or an option is
 * invalid.
 */
export function toOpenAITools(
  tools: readonly Tool[],
  options?: OpenAIToolsOptions & { readonly api?: "chat" | undefined },
): OpenAITool[];
/**
 * Converts tools to Responses API `tools` entries:
 * `{ type: "function", name, description, parameters, strict }`. Answer a `function_call` output
 * item with `runTool(tools, item.name, item.arguments)` and send back a `function_call_output`
 * item with the same `call_id` and the result's `content`.
 *
 * @example
 * ```ts
 * import { memoryTools, openFileStore, toOpenAITools } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const tools = toOpenAITools(memoryTools(await openFileStore({ dir })), { api: "responses" });
 * assert.equal(tools[1]?.name, "memory_read");
 * assert.equal(tools[1]?.strict, false);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @param tools The tools, with distinct names.
 * @param options `api: "responses"` and `strict`.
 * @returns One entry per tool, each with its own copy of the schema.
 * @throws {ConfigError} when `tools` is not a list of tools with distinct names, or an option is
 * invalid.
 */
export function toOpenAITools(
  tools: readonly Tool[],
  options: OpenAIToolsOptions & { readonly api: "responses" },
): OpenAIResponsesTool[];
export function toOpenAITools(
  tools: readonly Tool[],
  options: OpenAIToolsOptions = {},
): OpenAITool[] | OpenAIResponsesTool[] {
  const { api, strict } = checkOptions(options);
  const checked = checkTools("the OpenAI API", tools);
  const parameters = (tool: Tool) => strict ? strictSchema(schemaOf(tool)) : schemaOf(tool);
  if (api === "responses") {
    return checked.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: parameters(tool),
      strict,
    }));
  }
  return checked.map((tool) => ({
    type: "function",
    function: {
      name: tool.name,
      description: tool.description,
      parameters: parameters(tool),
      ...(strict ? { strict: true } : {}),
    },
  }));
}

function checkOptions(options: OpenAIToolsOptions): { api: "chat" | "responses"; strict: boolean } {
  const o = readToolOptions("convert tools for the OpenAI API", options, ["api", "strict"]);
  const api = o.fields.api ?? "chat";
  if (api !== "chat" && api !== "responses") {
    throw o.fail(`option "api" must be "chat" or "responses", got ${quote(String(api))}`);
  }
  return { api, strict: o.boolean("strict") ?? false };
}
