// A deterministic embedder for the hybrid-search tests and benchmark: each word of a text adds
// one to a dimension, words of one meaning (CONCEPTS) to the same one, other words to one chosen
// by their hash. Two texts about the same things point the same way, whatever words they use.
// It counts what it embeds, and can be made to fail in each way an embedding API can.

/** Words that mean the same thing share a dimension. */
const CONCEPTS: Record<string, number> = {
  car: 0,
  automobile: 0,
  vehicle: 0,
  sedan: 0,
  toyota: 0,
  dog: 1,
  puppy: 1,
  canine: 1,
  pet: 1,
  coffee: 2,
  espresso: 2,
  latte: 2,
  metric: 3,
  kilometres: 3,
  km: 3,
  units: 3,
};

/** The dimension of its vectors, unless told. */
export const DIM = 64;

/** How a test embedder misbehaves. */
export type Fault = "none" | "throw" | "count" | "dimension" | "nan" | "hang";

/** A counting embedder whose `fault` can be changed between calls. */
export class TestEmbedder {
  /** Texts embedded so far, over every call. */
  texts = 0;
  /** Calls made so far. */
  calls = 0;
  fault: Fault = "none";
  readonly #dim: number;

  constructor(dim = DIM) {
    this.#dim = dim;
  }

  /** The kinds of the calls, in order. */
  readonly kinds: string[] = [];

  readonly embed = (
    texts: string[],
    o?: { signal: AbortSignal; kind: "query" | "document" },
  ): Promise<Float32Array[]> => {
    this.kinds.push(o?.kind ?? "?");
    this.calls++;
    this.texts += texts.length;
    switch (this.fault) {
      case "throw":
        return Promise.reject(new Error("429 from https://api.example.com, key sk-secret"));
      case "hang":
        return new Promise(() => {});
      case "count":
        return Promise.resolve(texts.slice(1).map((t) => vectorOf(t, this.#dim)));
      case "dimension":
        return Promise.resolve(
          texts.map((t, i) => vectorOf(t, this.#dim).slice(i === 0 ? 1 : 0)),
        );
      case "nan":
        return Promise.resolve(texts.map((t) => vectorOf(t, this.#dim).map(() => NaN)));
      default:
        return Promise.resolve(texts.map((t) => vectorOf(t, this.#dim)));
    }
  };
}

/** The vector of one text. */
export function vectorOf(text: string, dim = DIM): Float32Array {
  const v = new Float32Array(dim);
  for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
    v[CONCEPTS[word] ?? 8 + (hash(word) % (dim - 8))]! += 1;
  }
  return v;
}

function hash(word: string): number {
  let h = 2166136261;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619) >>> 0;
  return h;
}
