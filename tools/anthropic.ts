/**
 * Tools in the format of the Anthropic Messages API, and as runnable tools for the Anthropic
 * SDK's tool runner.
 *
 * @module
 */

import type { JsonSchemaObject, Tool } from "./tool.ts";
import { checkTools, schemaOf } from "./_adapt.ts";
import { readToolOptions } from "./_options.ts";
import { runOrdered } from "./_queue.ts";

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
 * `tool_result` block with `content` and `is_error` from the result. Handed to the SDK's tool
 * runner instead, the entries run there too, as `toAnthropicRunnableTools` with its defaults
 * makes them (use that function to pass options).
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
  return checkTools("the Anthropic API", tools).map((tool) => {
    // Handed to the SDK's tool runner by mistake, the entries still run (as toAnthropicRunnableTools
    // makes them, with the defaults): `parse` and `run` are there, but not enumerable, so they
    // never reach the API's JSON, a copy or an equality check.
    const { parse, run } = runnable(tool, undefined, true);
    return Object.defineProperties(toAnthropicTool(tool), {
      parse: { value: parse, enumerable: false },
      run: { value: run, enumerable: false },
    });
  });
}

function toAnthropicTool(tool: Tool): AnthropicTool {
  return { name: tool.name, description: tool.description, input_schema: schemaOf(tool) };
}

/**
 * The context the Anthropic SDK's tool runner hands to `run`: the `tool_use` being served and
 * the runner's abort signal. A structural copy of the SDK's `BetaToolRunContext`, so this
 * library never imports the SDK.
 */
export interface AnthropicToolRunContext {
  /** The `tool_use` block (or session event) being served; its `id` is the call's id. */
  readonly toolUse?: { readonly id: string } | undefined;
  /** Aborted when the runner is aborted. */
  readonly signal?: AbortSignal | null | undefined;
}

/**
 * A tool for the Anthropic SDK's `client.beta.messages.toolRunner`: a Messages API tool entry
 * plus the `parse` and `run` the runner calls (the SDK's `BetaRunnableTool`).
 */
export interface AnthropicRunnableTool extends AnthropicTool {
  /** Hands the model's input to `run` as it is; the tool checks it. */
  parse(content: unknown): unknown;
  /**
   * Runs the tool. Resolves to the result's text; a refusal or failure throws, which the runner
   * sends back as a `tool_result` with `is_error: true`.
   *
   * @param input The model's input.
   * @param context The runner's context: the `tool_use` id and the abort signal.
   * @returns The result's text.
   */
  run(input: unknown, context?: AnthropicToolRunContext): Promise<string>;
}

/** Options of `toAnthropicRunnableTools`. */
export interface AnthropicRunnableToolsOptions {
  /**
   * The SDK's `ToolError` class (`import { ToolError } from
   * "@anthropic-ai/sdk/lib/tools/ToolError"`). With it, a refusal reaches the model as exactly
   * its text; without it, the runner sends a thrown `Error` as `"Error: " + its text`. Either way
   * the result has `is_error: true`.
   */
  readonly ToolError?: (new (content: string) => Error) | undefined;
  /**
   * Run the memory tools' calls of one scope one after another, in the order the runner started
   * them, which is the order the model gave them (default `true`). The SDK's tool runner runs a
   * turn's tool calls at once; in order, a `memory_write` then a `memory_read` of the same key in
   * one turn reads what was written. Tools that are not memory tools are never held back.
   */
  readonly ordered?: boolean | undefined;
}

/**
 * Converts tools to runnable tools for the Anthropic SDK's tool runner
 * (`client.beta.messages.toolRunner({ model, max_tokens, messages, tools })`), which calls the
 * model, runs every tool it asks for, and sends the results back until the model stops. Each
 * call gets the runner's abort signal and the `tool_use` id; a refusal becomes a `tool_result`
 * with `is_error: true` and the refusal text. The memory tools' calls through one scope run in
 * the order the model gave them (`ordered`, on by default).
 *
 * @example
 * ```ts
 * import { memoryTools, openFileStore, toAnthropicRunnableTools } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const [list, read] = toAnthropicRunnableTools(memoryTools(await openFileStore({ dir })));
 * assert.equal(await list!.run(list!.parse({})), "No memories are saved yet.");
 * await assert.rejects(read!.run({ key: "nope" }), /No memory has key "nope"/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @param tools The tools, with distinct names.
 * @param options The SDK's `ToolError` class, to send a refusal's text unprefixed, and `ordered`.
 * @returns One runnable tool per tool.
 * @throws {ConfigError} when `tools` is not a list of tools with distinct names, or an option is
 * invalid.
 */
export function toAnthropicRunnableTools(
  tools: readonly Tool[],
  options: AnthropicRunnableToolsOptions = {},
): AnthropicRunnableTool[] {
  const o = readToolOptions("convert tools for the Anthropic tool runner", options, [
    "ToolError",
    "ordered",
  ]);
  const ToolError = o.func<AnthropicRunnableToolsOptions["ToolError"]>(
    "ToolError",
    "the SDK's ToolError class",
  );
  const ordered = o.boolean("ordered") ?? true;
  return checkTools("the Anthropic tool runner", tools).map((tool) => ({
    ...toAnthropicTool(tool),
    ...runnable(tool, ToolError, ordered),
  }));
}

function runnable(
  tool: Tool,
  ToolError: AnthropicRunnableToolsOptions["ToolError"],
  ordered: boolean,
): Pick<AnthropicRunnableTool, "parse" | "run"> {
  const call = async (input: unknown, context?: AnthropicToolRunContext) => {
    const id = context?.toolUse?.id;
    const signal = context?.signal ?? undefined;
    const result = await tool.run(input, {
      ...(signal === undefined ? {} : { signal }),
      ...(typeof id === "string" ? { toolCallId: id } : {}),
    });
    if (!result.isError) return result.content;
    throw ToolError === undefined ? new Error(result.content) : new ToolError(result.content);
  };
  return {
    parse: (content: unknown) => content,
    run: (input, context) =>
      ordered ? runOrdered(tool, () => call(input, context)) : call(input, context),
  };
}
