/**
 * `runTool`: one tool call dispatched by name, the way every agent loop answers a model.
 *
 * @module
 */

import { quote } from "../store/text.ts";
import type { Tool, ToolResult, ToolRunOptions } from "./tool.ts";
import { checkTools } from "./_adapt.ts";

/**
 * Runs the tool the model named on the model's arguments. A name the model invented (or any
 * value that is not a tool's name) is not an exception but a refusal (`isError: true`) that
 * lists the tools there are, so the model can correct itself; like `Tool.run`, `runTool` never
 * rejects for anything the model sends.
 *
 * @example
 * ```ts
 * import { memoryTools, openFileStore, runTool } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const tools = memoryTools(await openFileStore({ dir }));
 * const listed = await runTool(tools, "memory_list", "{}");
 * assert.equal(listed.content, "No memories are saved yet.");
 * const invented = await runTool(tools, "memory_search", { query: "x" });
 * assert.equal(invented.isError, true);
 * assert.match(invented.content, /memory_list, memory_read, memory_write, memory_delete/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @param tools The tools offered to the model, with distinct names.
 * @param name The tool name the model called.
 * @param input The model's arguments: an object, or its JSON text.
 * @param options The host's per-call options: the abort signal and the tool call's id.
 * @returns The tool's result, or a refusal naming the tools there are.
 * @throws {ConfigError} when `tools` is not a list of tools with distinct names (a host error).
 */
export function runTool(
  tools: readonly Tool[],
  name: unknown,
  input: unknown,
  options?: ToolRunOptions,
): Promise<ToolResult> {
  const checked = checkTools("runTool", tools);
  const tool = typeof name === "string" ? checked.find((t) => t.name === name) : undefined;
  if (tool === undefined) {
    const names = checked.map((t) => t.name).join(", ");
    return Promise.resolve({
      isError: true,
      content:
        `Refused: there is no tool named ${
          typeof name === "string" ? quote(name) : "like that"
        }. ` +
        (checked.length === 0 ? "No tools are available." : `The tools are: ${names}.`),
    });
  }
  return tool.run(input, options);
}
