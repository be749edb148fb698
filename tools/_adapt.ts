// What every adapter shares: checking the tool list, and a mutable copy of a tool's schema for an
// SDK whose types expect mutable objects.

import { ConfigError } from "../store/errors.ts";
import { describeType, quote } from "../store/_text.ts";
import type { JsonSchemaObject, Tool } from "./tool.ts";

/** Checks that `tools` is a list of tools with distinct names, as every tool API requires. */
export function checkTools(adapter: string, tools: readonly Tool[]): readonly Tool[] {
  if (!Array.isArray(tools)) {
    throw new ConfigError(
      `Cannot convert tools for ${adapter}: expected an array, got ${describeType(tools)}`,
    );
  }
  const seen = new Set<string>();
  for (const tool of tools) {
    if (
      tool === null || typeof tool !== "object" || typeof tool.name !== "string" ||
      typeof tool.run !== "function"
    ) {
      throw new ConfigError(
        `Cannot convert tools for ${adapter}: ${describeType(tool)} is not a Tool`,
      );
    }
    if (seen.has(tool.name)) {
      throw new ConfigError(
        `Cannot convert tools for ${adapter}: two tools are named ${quote(tool.name)}`,
      );
    }
    seen.add(tool.name);
  }
  return tools;
}

/** A deep, mutable copy of the tool's input schema. */
export function schemaOf(tool: Tool): JsonSchemaObject {
  return structuredClone(tool.inputSchema) as JsonSchemaObject;
}
