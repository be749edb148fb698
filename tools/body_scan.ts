// One pass over a memory's body counts the word starts of every word of a query (any case, each
// at most MAX_COUNTED), as one pass per word would, at about half the cost of those passes.

// Matches of one word in one field beyond this many are not counted: BM25 saturates (with k1 =
// 1.2, 16 matches score 93% of infinitely many), and counting a common word costs the most.
export const MAX_COUNTED = 16;
const WORD_CHAR = /[\p{L}\p{N}]/u;

/** One pass over a body for every term of a query (see `countBodyWordStarts`). */
export interface BodyScan {
  readonly terms: number;
  /** The terms, longest first, as one global, case-insensitive alternation of groups. */
  readonly pattern: RegExp;
  /** For each group: the terms a match of it counts for (itself, and every term it starts with). */
  readonly credits: readonly (readonly number[])[];
}

/** The scan `countBodyWordStarts` makes of `terms`. */
export function bodyScan(terms: readonly string[]): BodyScan {
  const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const order = terms.map((_, i) => i).sort((a, b) => terms[b]!.length - terms[a]!.length);
  const pattern = new RegExp(order.map((i) => `(${escape(terms[i]!)})`).join("|"), "giu");
  // Where a longer term matches, a shorter one it starts with (in any case) matches too, at the
  // same place: the alternation finds the longer, and the match counts for both.
  const credits = order.map((i) =>
    order.filter((j) =>
      j === i ||
      (terms[j]!.length <= terms[i]!.length &&
        new RegExp(`^${escape(terms[j]!)}`, "iu").test(terms[i]!))
    )
  );
  return { terms: terms.length, pattern, credits };
}

/**
 * For each term, how many words of `text` start with it in any case (at most `MAX_COUNTED`), from
 * one pass of the scan's alternation instead of one per term: a match inside a word covers no
 * word start, since the terms are made of word characters.
 */
export function countBodyWordStarts(text: string, scan: BodyScan): number[] {
  const counts = new Array<number>(scan.terms).fill(0);
  let open = scan.terms;
  const pattern = scan.pattern;
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m !== null && open > 0; m = pattern.exec(text)) {
    if (m.index > 0 && isWordChar(text, m.index - 1)) continue;
    const group = m.indexOf(m[0], 1) - 1;
    for (const t of scan.credits[group]!) {
      if (counts[t]! < MAX_COUNTED && ++counts[t]! === MAX_COUNTED) open--;
    }
  }
  return counts;
}

/** Whether the character at `i` of `text` is a letter or a digit. */
export function isWordChar(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 0x80) {
    return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
  }
  // A low surrogate: look at the whole code point.
  const start = c >= 0xdc00 && c <= 0xdfff && i > 0 ? i - 1 : i;
  return WORD_CHAR.test(String.fromCodePoint(text.codePointAt(start)!));
}
