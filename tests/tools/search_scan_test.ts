// The body scan of memory_search's ranking counts, for every query word, the words of a body that
// start with it in any case, exactly as one case-insensitive pass per word does (the definition
// below), on texts whose words share prefixes and differ in case, in and beyond ASCII.

import assert from "node:assert/strict";
import fc from "fast-check";
import { bodyScan, countBodyWordStarts } from "../../tools/body_scan.ts";

const MAX_COUNTED = 16;
// A query's words as memory_search folds them, each once.
const queryTerms = (q: string) =>
  [
    ...new Set(q.toWellFormed().normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []),
  ].slice(0, 16);
const WORD_CHAR = /[\p{L}\p{N}]/u;

// The definition: one pass per term, a match counted where no word character comes before it.
function onePassPerTerm(text: string, term: string): number {
  const pattern = new RegExp(term, "giu");
  let n = 0;
  for (let m = pattern.exec(text); m !== null && n < MAX_COUNTED; m = pattern.exec(text)) {
    const before = m.index === 0 ? "" : String.fromCodePoint(text.codePointAt(m.index - 1)!);
    const low = m.index > 1 && /[\udc00-\udfff]/.test(text[m.index - 1]!);
    const prev = low ? String.fromCodePoint(text.codePointAt(m.index - 2)!) : before;
    if (m.index === 0 || !WORD_CHAR.test(prev)) n++;
  }
  return n;
}

// Few letters, so words often start with one another; case pairs, a sharp s, a dotless i, a
// Kelvin sign, digits, an astral letter, and separators.
const piece = fc.constantFrom(
  "ka",
  "KA",
  "kal",
  "Kalo",
  "lo",
  "ß",
  "ẞ",
  "ss",
  "ı",
  "I",
  "i",
  "K",
  "k",
  "7",
  "𝒜",
  "é",
  "É",
  " ",
  ".",
  "\n",
  "-",
);
const text = fc.array(piece, { maxLength: 80 }).map((p) => p.join(""));

Deno.test("the body scan counts each query word's word starts as one pass per word does", () => {
  fc.assert(
    fc.property(text, text, (body, query) => {
      const terms = queryTerms(query);
      if (terms.length === 0) return;
      const got = countBodyWordStarts(body, bodyScan(terms));
      assert.deepEqual(
        got,
        terms.map((t) => onePassPerTerm(body, t)),
        JSON.stringify({ body, terms }),
      );
    }),
    { numRuns: 3_000 },
  );
});

Deno.test("the body scan stops counting a word at 16 and counts the others on", () => {
  const terms = ["ka", "kalo", "mi"];
  const body = `${"kalo ".repeat(20)} mi mi`;
  assert.deepEqual(countBodyWordStarts(body, bodyScan(terms)), [16, 16, 2]);
});
