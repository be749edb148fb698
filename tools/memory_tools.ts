/**
 * The model-facing memory tools: `memory_list`, `memory_read`, `memory_write`, `memory_delete`,
 * and the opt-in `memory_search`.
 *
 * @module
 */

import { Scope } from "../store/scope.ts";
import type { Store } from "../store/types.ts";
import { instrument, isReadOnly } from "../store/build.ts";
import type { Tool } from "./tool.ts";
import { checkStore } from "./_adapt.ts";
import { deleteTool, readTool, writeTool } from "./_key_tools.ts";
import { DEFAULT_LIST_CHARS, listTool, MIN_LIST_CHARS } from "./_list_tool.ts";
import type { Context } from "./_memory_tool.ts";
import { searchTool } from "./_search_tool.ts";
import { type EmbedSettings, VectorCache } from "./_vectors.ts";
import { sameStore } from "./_writers.ts";
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
   * (without the run's scope: a search grants no authority to overwrite). With `{ embed }`,
   * hybrid: keywords and meaning fused (see `HybridSearchOptions`).
   */
  readonly search?: boolean | HybridSearchOptions | undefined;
  /**
   * Keys the model may read but never write or delete through these tools: exact keys, or
   * prefixes ending in "." (`"policy."` protects every key that starts with it). A write or
   * delete of one is refused, naming the rule, and writes nothing. The store's own API and the
   * CLI are not restricted. Default: none.
   */
  readonly protect?: readonly string[] | undefined;
}

/**
 * Hybrid `memory_search`: BM25 and the cosine similarity of the host's embeddings, fused by
 * reciprocal rank fusion (each memory scores the sum of 1 / (60 + its rank) in the keyword
 * ranking and among the 50 nearest in meaning). Each memory's vector is cached by entry revision
 * in a sidecar the store keeps (a hidden file on the file backend, a stream of its own on
 * jetstream), shared by every process, so a search embeds the query and only what changed. An
 * embedder that fails, answers wrongly (a wrong count or dimension, NaN) or takes longer than
 * `timeoutMs` makes that search rank by keywords, with a one-line note to the model.
 */
export interface HybridSearchOptions {
  /**
   * The host's embedding API: one vector per text, in order (a `Float32Array`, or any array of
   * numbers). A memory's text is its key, description and body, cut to 8,000 characters. The
   * second argument says whether the call embeds the query (alone) or memories (for APIs that
   * embed the two differently, such as Voyage's `input_type`), and its signal aborts when the
   * search stops waiting.
   */
  readonly embed: (
    texts: string[],
    options: { readonly signal: AbortSignal; readonly kind: "query" | "document" },
  ) => Promise<ArrayLike<number>[]>;
  /** The name vectors are cached under (default `"default"`): change it with the model. */
  readonly model?: string | undefined;
  /** How long one search waits for its embeddings, in milliseconds (default 10,000). */
  readonly timeoutMs?: number | undefined;
  /** The most texts one `embed` call gets (default 64). */
  readonly batch?: number | undefined;
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
  if (search !== false) {
    tools.push(searchTool(ctx, search === true ? undefined : new VectorCache(ctx.store, search)));
  }
  if (!ctx.readOnly) tools.push(writeTool(ctx), deleteTool(ctx));
  return tools;
}

const OPTION_FIELDS = ["readOnly", "scope", "listMaxChars", "search", "protect"];

function context(
  store: Store,
  options: MemoryToolsOptions,
): { ctx: Context; search: boolean | EmbedSettings } {
  const action = "make the memory tools";
  const backend = checkStore(store, action);
  const o = readToolOptions(action, options, OPTION_FIELDS);
  const readOnly = o.boolean("readOnly");
  const scope = o.fields.scope;
  if (scope !== undefined && scope !== null && !(scope instanceof Scope)) {
    throw o.fail(`option "scope" must be a Scope or null`);
  }
  const traced = instrument(store);
  sameStore(traced, store);
  const ctx: Context = {
    store: traced,
    backend,
    scope: scope === undefined ? new Scope() : scope,
    readOnly: readOnly === true || isReadOnly(store),
    listMaxChars: o.integer("listMaxChars", MIN_LIST_CHARS, DEFAULT_LIST_CHARS),
    protect: checkKeyRules(action, "protect", o.fields.protect),
  };
  const search = o.fields.search;
  if (search === undefined || typeof search === "boolean") return { ctx, search: search === true };
  return { ctx, search: embedSettings(action, search) };
}

function embedSettings(action: string, raw: unknown): EmbedSettings {
  const o = readToolOptions(action, raw, ["embed", "model", "timeoutMs", "batch"]);
  const embed = o.func<EmbedSettings["embed"]>("embed", "the host's embed(texts) function");
  if (embed === undefined) {
    throw o.fail(`option "search" must be true, false, or { embed } with the host's embedder`);
  }
  const model = o.fields.model ?? "default";
  if (typeof model !== "string" || model.length === 0 || model.length > 200) {
    throw o.fail(`option "search.model" must be a name of 1 to 200 characters`);
  }
  return {
    embed,
    model,
    timeoutMs: o.integer("timeoutMs", 1, 10_000),
    batch: o.integer("batch", 1, 64),
  };
}
