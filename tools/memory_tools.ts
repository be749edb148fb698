/**
 * The model-facing memory tools: `memory_list`, `memory_read`, `memory_write`, `memory_delete`,
 * and the opt-in `memory_search`.
 *
 * @module
 */

import { Scope } from "../store/scope.ts";
import type { Store } from "../store/types.ts";
import { instrument, isReadOnly } from "../store/_store.ts";
import type { Tool } from "./tool.ts";
import { checkStore } from "./_adapt.ts";
import { deleteTool, readTool, writeTool } from "./_key_tools.ts";
import { DEFAULT_LIST_CHARS, listTool, MIN_LIST_CHARS } from "./_list_tool.ts";
import type { Context } from "./_memory_tool.ts";
import { searchTool } from "./_search_tool.ts";
import { readToolOptions } from "./_options.ts";
import { checkKeyRules } from "./_key_rules.ts";

export { DEFAULT_LIST_CHARS, MIN_LIST_CHARS };

/** Options of `memoryTools`. */
export interface MemoryToolsOptions {
  /**
   * Leave out `memory_write` and `memory_delete`, so the model cannot change memory. Implied
   * when the store itself is read-only (`openStore` with `readOnly: true`).
   */
  readonly readOnly?: boolean | undefined;
  /**
   * The run's scope, passed to every store call: reads record revisions in it, and on a backend
   * that enforces read-before-update only those authorize an overwrite. Omitted, the tools keep
   * a fresh scope of their own. `null` is a run without a scope, as everywhere in this library:
   * nothing is recorded, and nothing this run reads authorizes an overwrite (on a store that
   * enforces read-before-update, every `"overwrite": true` is refused as stale).
   */
  readonly scope?: Scope | null | undefined;
  /**
   * The most characters one `memory_list` result takes (default `DEFAULT_LIST_CHARS`, 16,000;
   * at least `MIN_LIST_CHARS`, 2,000). A list that does not fit comes in pages; each cut page
   * says how many memories remain and the exact arguments that continue it. A page always shows
   * at least one memory.
   */
  readonly listMaxChars?: number | undefined;
  /**
   * Add `memory_search` (default `false`): ranked full-text search over keys, descriptions and
   * bodies, each hit shown with its key, description and a snippet, in pages within
   * `listMaxChars`. Read-only, so read-only stores offer it too. Each search reads every memory
   * (without the run's scope: a search grants no authority to overwrite).
   */
  readonly search?: boolean | undefined;
  /**
   * Keys the model may read but never write or delete through these tools: exact keys, or
   * prefixes ending in "." (`"policy."` protects every key that starts with it). A write or
   * delete of one is refused, naming the rule, and writes nothing. The store's own API and the
   * CLI are not restricted. Default: none.
   */
  readonly protect?: readonly string[] | undefined;
}

/**
 * The memory tools for one run over `store`: `memory_list`, `memory_read`, `memory_write` and
 * `memory_delete`, or only the first two when read-only; with `search: true`, `memory_search`
 * after `memory_read` (read-only stores included). Each carries an empty `ExposeSpec`, which
 * keeps it off MCP and A2A.
 *
 * Every call passes the run's scope to the store and makes an OpenTelemetry span
 * (`execute_tool <name>`, with `memory.backend`, `memory.operation` and `memory.outcome`). Stored
 * text in a result is framed as data written by an earlier run, which nothing stored can break
 * out of. `run` never rejects for anything the model sends: a refusal names what was wrong and
 * what is legal, and nothing is written on any refusal.
 *
 * @example A write that meets an existing key
 * ```ts
 * import { memoryTools, openFileStore } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const tools = memoryTools(await openFileStore({ dir }));
 * const write = tools.find((t) => t.name === "memory_write")!;
 * const args = { key: "user.name", description: "What the user wants to be called", content: "Sam" };
 * assert.equal((await write.run(args)).isError, false);
 * const refused = await write.run({ ...args, content: "Samuel" });
 * assert.equal(refused.isError, true);
 * assert.match(refused.content, /What the user wants to be called/);
 * assert.deepEqual(
 *   memoryTools(await openFileStore({ dir }), { readOnly: true }).map((t) => t.name),
 *   ["memory_list", "memory_read"],
 * );
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @param store The store; any `Store` works, its calls are traced.
 * @param options `readOnly`, the run's `scope`, `listMaxChars`, `search` and `protect`.
 * @returns The tools, in the order list, read, search (when asked for), write, delete.
 * @throws {ConfigError} when `store` is not a store or an option is invalid.
 */
export function memoryTools(store: Store, options: MemoryToolsOptions = {}): Tool[] {
  const { ctx, search } = context(store, options);
  const tools = [listTool(ctx), readTool(ctx)];
  if (search) tools.push(searchTool(ctx));
  if (!ctx.readOnly) tools.push(writeTool(ctx), deleteTool(ctx));
  return tools;
}

const OPTION_FIELDS = ["readOnly", "scope", "listMaxChars", "search", "protect"];

function context(store: Store, options: MemoryToolsOptions): { ctx: Context; search: boolean } {
  const action = "make the memory tools";
  const backend = checkStore(store, action);
  const o = readToolOptions(action, options, OPTION_FIELDS);
  const readOnly = o.boolean("readOnly");
  const scope = o.fields.scope;
  if (scope !== undefined && scope !== null && !(scope instanceof Scope)) {
    throw o.fail(`option "scope" must be a Scope or null`);
  }
  const ctx: Context = {
    store: instrument(store),
    backend,
    scope: scope === undefined ? new Scope() : scope,
    readOnly: readOnly === true || isReadOnly(store),
    listMaxChars: o.integer("listMaxChars", MIN_LIST_CHARS, DEFAULT_LIST_CHARS),
    protect: checkKeyRules(action, "protect", o.fields.protect),
  };
  return { ctx, search: o.boolean("search") === true };
}
