/**
 * `searchMemories`: the ranking `memory_search` gives the model (BM25 over key, description and
 * body; see tools/_search.ts), as data for an operator's own view of a store, such as the console.
 *
 * @module
 */

import type { CallOptions, Store } from "../store/types.ts";
import { readAllEntries } from "../store/entries.ts";
import { queryTerms, rank, snippet } from "./_search.ts";

/** One memory a search found, best first. */
export interface SearchMatch {
  /** The memory's key. */
  readonly key: string;
  /** Its description. */
  readonly description: string;
  /** Its BM25 score (higher is better; only the order means anything). */
  readonly score: number;
  /** A short stretch of the body around the query's rarest word it holds ("" when none). */
  readonly snippet: string;
}

/** What `searchMemories` found. */
export interface SearchResult {
  /** The matches, best first (equal scores in key order). */
  readonly matches: SearchMatch[];
  /** How many memories were searched. */
  readonly searched: number;
  /** The query's words that counted, as the ranking folded them. */
  readonly terms: readonly string[];
}

/**
 * Ranks every readable memory of `store` against `query`, exactly as `memory_search` does. A
 * query without a letter or digit matches nothing. Nothing is recorded in a scope.
 *
 * @example Find a memory by a word of its body
 * ```ts
 * import { openFileStore, searchMemories } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const store = await openFileStore({ dir });
 * await store.create("user.units", "Preferred units", "The user measures in metric");
 * await store.create("user.name", "What to call the user", "Sam");
 * const { matches } = await searchMemories(store, "metric");
 * assert.deepEqual(matches.map((m) => m.key), ["user.units"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @param store Any store.
 * @param query The words to look for.
 * @param opts An abort signal.
 * @returns The matches, best first, and how many memories were searched.
 * @throws {UnavailableError} when the store cannot be read.
 */
export async function searchMemories(
  store: Store,
  query: string,
  opts?: Pick<CallOptions, "signal">,
): Promise<SearchResult> {
  const terms = queryTerms(query);
  if (terms.length === 0) return { matches: [], searched: 0, terms };
  const docs = await readAllEntries(store, opts?.signal === undefined ? {} : opts);
  const { hits, rarestFirst } = rank(docs, terms);
  return {
    matches: hits.map((h) => ({
      key: h.key,
      description: h.description,
      score: h.score,
      snippet: snippet(h.content, rarestFirst),
    })),
    searched: docs.length,
    terms,
  };
}
