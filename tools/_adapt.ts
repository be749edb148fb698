// What every adapter shares: checking the tool list and the store, and a mutable copy of a tool's
// schema for an SDK whose types expect mutable objects.

import { ConfigError } from "../store/errors.ts";
import { describeType, quote } from "../store/text.ts";
import type { Store } from "../store/types.ts";
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

const STORE_METHODS = ["info", "list", "read", "create", "update", "delete"] as const;

/**
 * Checks that `store` has the `Store` methods and returns the backend name it reports, for spans;
 * anything else is a `ConfigError` with `action` ("make the memory tools", say) in front.
 */
export function checkStore(store: Store, action: string): string {
  if (
    store === null || typeof store !== "object" ||
    !STORE_METHODS.every((m) =>
      typeof (store as unknown as Record<string, unknown>)[m] === "function"
    )
  ) {
    throw new ConfigError(`Cannot ${action}: expected a Store, got ${describeType(store)}`);
  }
  return storeBackend(store, action);
}

/**
 * The backend name a store reports, for spans; a store whose `info()` throws or answers something
 * else is a `ConfigError` saying so, with `action` ("make the memory tools", say) in front.
 */
export function storeBackend(store: Store, action: string): string {
  let info;
  try {
    info = store.info();
  } catch (e) {
    throw new ConfigError(
      `Cannot ${action}: the store's info() threw ${
        e instanceof Error ? `${e.name}: ${quote(e.message)}` : describeType(e)
      }; a Store must answer info() with its backend name`,
      { cause: e },
    );
  }
  if (info === null || typeof info !== "object" || typeof info.backend !== "string") {
    throw new ConfigError(
      `Cannot ${action}: the store's info() must return { backend, location }, got ${
        describeType(info)
      }`,
    );
  }
  return info.backend;
}
