/**
 * Tools for the Vercel AI SDK (`npm:ai`), without this library importing it: the caller passes
 * the SDK's `jsonSchema` helper.
 *
 * @module
 */

import type { JsonSchemaObject, Tool, ToolResult } from "./tool.ts";
import { errorKind, quote } from "../store/text.ts";
import { checkTools, schemaOf } from "./_adapt.ts";
import { readToolOptions } from "./_options.ts";
import { runOrdered } from "./_queue.ts";

/** What `toAISDKTools` needs from the AI SDK. */
export interface AISDKToolsOptions<S> {
  /** The SDK's `jsonSchema` helper (`import { jsonSchema } from "ai"`). */
  jsonSchema(schema: JsonSchemaObject): S;
  /**
   * Run the memory tools' calls of one scope one after another, in the order the SDK started
   * them (default `true`): `generateText` runs a step's tool calls at once. Tools that are not
   * memory tools are never held back.
   */
  readonly ordered?: boolean | undefined;
}

/** What the model sees of a result: text, or error text for a refusal. */
export type AISDKModelOutput =
  | { type: "text"; value: string }
  | { type: "error-text"; value: string };

/** One tool in the AI SDK's `tool()` shape; a record of them is a `ToolSet`. */
export interface AISDKTool<S> {
  /** What the tool does, for the model. */
  description: string;
  /** The input schema, wrapped by the SDK's `jsonSchema`. */
  inputSchema: S;
  /** Runs the tool; resolves to its result, never rejects for anything the model sends. */
  execute(
    input: unknown,
    options: { abortSignal?: AbortSignal | undefined; toolCallId?: string | undefined },
  ): Promise<ToolResult>;
  /** Sends the result's text to the model, as error text when the result is an error. */
  toModelOutput(options: { output: ToolResult }): AISDKModelOutput;
}

/**
 * Converts tools to an AI SDK `ToolSet` (name → tool), for `generateText({ tools })` and
 * `streamText({ tools })`. Each tool's `execute` runs it; `toModelOutput` sends the result's
 * text back, as `error-text` when the result is an error.
 *
 * @example
 * ```ts
 * import { memoryTools, openFileStore, toAISDKTools } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * // In an app: `import { jsonSchema } from "ai"`. Any function that wraps a schema works here.
 * const jsonSchema = (schema: object) => ({ jsonSchema: schema });
 * const dir = await Deno.makeTempDir();
 * const tools = toAISDKTools(memoryTools(await openFileStore({ dir })), { jsonSchema });
 * const result = await tools.memory_read!.execute({ key: "nope" }, {});
 * assert.deepEqual(tools.memory_read!.toModelOutput({ output: result }).type, "error-text");
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @param tools The tools, with distinct names.
 * @param options The SDK's `jsonSchema` helper (required), and `ordered`.
 * @returns The tool set.
 * @throws {ConfigError} when `tools` is not a list of tools with distinct names, or `jsonSchema`
 * is missing, not a function, or throws.
 */
export function toAISDKTools<S>(
  tools: readonly Tool[],
  options: AISDKToolsOptions<S>,
): Record<string, AISDKTool<S>> {
  const action = "convert tools for the AI SDK";
  const o = readToolOptions(action, options, ["jsonSchema", "ordered"]);
  const jsonSchema = o.func<AISDKToolsOptions<S>["jsonSchema"]>(
    "jsonSchema",
    'the SDK\'s jsonSchema helper (import { jsonSchema } from "ai")',
  );
  if (jsonSchema === undefined) {
    throw o.fail(
      'option "jsonSchema" is required: pass the SDK\'s helper, import { jsonSchema } from "ai"',
    );
  }
  const ordered = o.boolean("ordered") ?? true;
  // fromEntries defines own properties, so a tool named "__proto__" stays a tool.
  return Object.fromEntries(
    checkTools("the AI SDK", tools).map((tool) => {
      let inputSchema: S;
      try {
        inputSchema = jsonSchema(schemaOf(tool));
      } catch (e) {
        throw o.fail(
          `option "jsonSchema" threw ${errorKind(e)} on the schema of ${quote(tool.name)}`,
        );
      }
      return [tool.name, toAISDKTool(tool, inputSchema, ordered)];
    }),
  );
}

function toAISDKTool<S>(tool: Tool, inputSchema: S, ordered: boolean): AISDKTool<S> {
  return {
    description: tool.description,
    inputSchema,
    execute: (input, options) => {
      const call = () =>
        tool.run(input, { signal: options?.abortSignal, toolCallId: options?.toolCallId });
      return ordered ? runOrdered(tool, call) : call();
    },
    toModelOutput: ({ output }) => ({
      type: output.isError ? "error-text" : "text",
      value: output.content,
    }),
  };
}
