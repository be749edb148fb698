// Hybrid ranking: keyword (BM25, _search.ts) and meaning (cosine similarity of the embedder's
// vectors) fused by reciprocal rank fusion: a memory's score is the sum, over the two rankings it
// appears in, of 1 / (RRF_K + its rank there). The keyword ranking holds every memory that
// matches a word; the meaning ranking, the VECTOR_CANDIDATES nearest to the query. RRF needs no
// scale shared by the two scores, which have none (Cormack, Clarke and Büttcher, SIGIR 2009).

import type { KeyedEntry } from "../store/backend.ts";
import type { SearchHit } from "./_search.ts";

/** The constant of reciprocal rank fusion (the paper's, and most engines' default). */
export const RRF_K = 60;
/** How many of the memories nearest in meaning take part in the fusion. */
export const VECTOR_CANDIDATES = 50;

/** The fused ranking, best first (equal scores in key order). */
export function fuse(
  docs: readonly KeyedEntry[],
  keyword: readonly SearchHit[],
  vectors: { readonly query: Float32Array; readonly docs: readonly Float32Array[] },
): SearchHit[] {
  const scores = new Map<string, number>();
  keyword.forEach((hit, i) => scores.set(hit.key, 1 / (RRF_K + i + 1)));
  const q = vectors.query;
  const near = docs.map((d, i) => {
    const v = vectors.docs[i]!;
    const dot = dotOf(q, v);
    // A damaged cached vector (a value that is not a number) is nearest to nothing.
    return { d, dot: Number.isFinite(dot) ? dot : -Infinity };
  }).sort((a, b) => b.dot - a.dot || (a.d.key < b.d.key ? -1 : a.d.key > b.d.key ? 1 : 0))
    .slice(0, VECTOR_CANDIDATES);
  near.forEach(({ d }, i) => scores.set(d.key, (scores.get(d.key) ?? 0) + 1 / (RRF_K + i + 1)));
  const byKey = new Map(docs.map((d) => [d.key, d]));
  return [...scores].map(([key, score]) => {
    const d = byKey.get(key)!;
    return { key, description: d.description, content: d.content, score };
  }).sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

// The dot product of two vectors of one length, four terms a step.
function dotOf(a: Float32Array, b: Float32Array): number {
  let [s0, s1, s2, s3] = [0, 0, 0, 0];
  const n = a.length - (a.length % 4);
  for (let i = 0; i < n; i += 4) {
    s0 += a[i]! * b[i]!;
    s1 += a[i + 1]! * b[i + 1]!;
    s2 += a[i + 2]! * b[i + 2]!;
    s3 += a[i + 3]! * b[i + 3]!;
  }
  for (let i = n; i < a.length; i++) s0 += a[i]! * b[i]!;
  return s0 + s1 + s2 + s3;
}
