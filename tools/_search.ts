// The ranking behind memory_search: BM25 over each memory's key, description and body (weighted
// 3, 2 and 1), a query word matching the words that start with it, run on the store's current text
// at each search; no index is kept. Why, and the scoring in full: docs/design/search.md.

import { bodyScan, countBodyWordStarts, isWordChar, MAX_COUNTED } from "./body_scan.ts";

/** One memory to search. */
export interface SearchDoc {
  readonly key: string;
  readonly description: string;
  readonly content: string;
}

/** One ranked match. */
export interface SearchHit {
  readonly key: string;
  readonly description: string;
  readonly score: number;
  /** The memory's body, for its snippet. */
  readonly content: string;
}

/** The ranked matches, and the query's words rarest first (what a snippet looks for). */
export interface Ranked {
  readonly hits: SearchHit[];
  readonly rarestFirst: readonly string[];
}

/** The most words of a query that count; the rest are ignored. */
export const MAX_QUERY_TERMS = 16;
/** The longest snippet, in characters, ellipses included. */
export const SNIPPET_CHARS = 160;
const K1 = 1.2;
const B = 0.75;
const WEIGHTS = [3, 2, 1] as const;
const WORD = /[\p{L}\p{N}]+/gu;

/** The words of a query, folded and each once, at most `MAX_QUERY_TERMS`. */
export function queryTerms(query: string): string[] {
  const words = fold(query).match(WORD) ?? [];
  return [...new Set(words)].slice(0, MAX_QUERY_TERMS);
}

function fold(text: string): string {
  return text.toWellFormed().normalize("NFKC").toLowerCase();
}

/** The memories that match `terms`, best first (equal scores in key order). */
export function rank(docs: readonly SearchDoc[], terms: readonly string[]): Ranked {
  if (terms.length === 0 || docs.length === 0) return { hits: [], rarestFirst: terms };
  // The body is not folded at all: normalizing or lower-casing megabytes costs more than the rest
  // of a search. Its words are matched case-insensitively as they stand.
  const fields = docs.map((d) => [fold(d.key), fold(d.description), d.content]);
  const avg = [0, 1, 2].map((f) =>
    Math.max(1, fields.reduce((n, fs) => n + fs[f]!.length, 0) / fields.length)
  );
  const scan = bodyScan(terms);
  // counts[doc][term][field]
  const counts = fields.map(([key, description, body]) => {
    const inBody = countBodyWordStarts(body!, scan);
    return terms.map((t, i) => [
      countWordStarts(key!, t),
      countWordStarts(description!, t),
      inBody[i]!,
    ]);
  });
  const df = terms.map((_, t) => counts.filter((c) => c[t]!.some((n) => n > 0)).length);
  const idf = df.map((n) => Math.log(1 + (docs.length - n + 0.5) / (n + 0.5)));
  const hits: SearchHit[] = [];
  docs.forEach((doc, d) => {
    let score = 0;
    let matched = 0;
    terms.forEach((_, t) => {
      let termScore = 0;
      counts[d]![t]!.forEach((tf, f) => {
        if (tf === 0) return;
        const norm = 1 - B + B * (fields[d]![f]!.length / avg[f]!);
        termScore += WEIGHTS[f as 0 | 1 | 2] * (tf * (K1 + 1)) / (tf + K1 * norm);
      });
      if (termScore > 0) matched++;
      score += idf[t]! * termScore;
    });
    if (score <= 0) return;
    score *= matched / terms.length;
    hits.push({ key: doc.key, description: doc.description, score, content: doc.content });
  });
  hits.sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const rarestFirst = terms.map((t, i) => ({ t, idf: idf[i]! })).sort((a, b) => b.idf - a.idf)
    .map(({ t }) => t);
  return { hits, rarestFirst };
}

/**
 * A short stretch of `content` around the first word that starts with the rarest of `rarestFirst`
 * the body holds, white space folded to single spaces, at most `SNIPPET_CHARS` with its ellipses;
 * "" when the body holds none of them.
 */
export function snippet(content: string, rarestFirst: readonly string[]): string {
  const lower = content.toLowerCase();
  for (const term of rarestFirst) {
    for (let i = lower.indexOf(term); i >= 0; i = lower.indexOf(term, i + 1)) {
      if (i > 0 && isWordChar(lower, i - 1)) continue;
      // Lower-casing keeps the length of almost all text; where it does not, show the start.
      return around(content, lower.length === content.length ? i : 0);
    }
  }
  return "";
}

/** The start of `content`, white space folded, at most `SNIPPET_CHARS` with its ellipsis. */
export function opening(content: string): string {
  return content === "" ? "" : around(content, 0);
}

// How many times a word of `text` starts with `term` (at most MAX_COUNTED).
function countWordStarts(text: string, term: string): number {
  let n = 0;
  for (let i = text.indexOf(term); i >= 0 && n < MAX_COUNTED; i = text.indexOf(term, i + 1)) {
    if (i === 0 || !isWordChar(text, i - 1)) n++;
  }
  return n;
}

function around(content: string, at: number): string {
  let start = Math.max(0, at - Math.floor(SNIPPET_CHARS / 3));
  let end = Math.min(content.length, start + SNIPPET_CHARS - 2);
  // Never split a surrogate pair.
  if (start > 0 && isLow(content.charCodeAt(start))) start--;
  if (end < content.length && isLow(content.charCodeAt(end))) end--;
  const text = content.slice(start, end).replace(/\s+/g, " ").trim();
  return `${start > 0 ? "…" : ""}${text}${end < content.length ? "…" : ""}`;
}

function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
