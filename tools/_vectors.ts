// The vectors of a hybrid search: the query's, and every memory's from a cache kept by entry
// revision (the SHA-256 of the model's name and the text embedded), so a search embeds the query
// and only what changed since. The cache is the store's sidecar (shared by every process on the
// store; store/sidecar.ts), with what this process last saw of each memory in front of it; a
// store without a sidecar (or a read-only view, or a sidecar that fails) keeps vectors in memory.
// A search removes the records of memories it finds gone; a redaction or purge removes the key's
// at once, and a search looks again after it writes, removing what it kept of a memory gone or
// changed meanwhile (so no purge leaves the purged text's vector behind).

// Whatever the embedder does (throws, answers the wrong number of vectors or a wrong dimension,
// NaN, takes too long), the search gets a one-line reason instead of vectors, and vectors it did
// get are kept for the next search.

import { createHash } from "node:crypto";
import type { KeyedEntry } from "../store/backend.ts";
import type { CallOptions, Store } from "../store/types.ts";
import { sidecarOf, type StoreSidecar } from "../store/sidecar.ts";
import { NotFoundError } from "../store/errors.ts";
import { readAllEntries } from "../store/entries.ts";

/** What an `embed` call is for: the query alone, or memories. */
export interface EmbedCall {
  readonly signal: AbortSignal;
  readonly kind: "query" | "document";
}

/** The host's embedder: one vector per text, in order. */
export type Embed = (texts: string[], options: EmbedCall) => Promise<ArrayLike<number>[]>;

/** How a hybrid search embeds. */
export interface EmbedSettings {
  readonly embed: Embed;
  /** The cache's name for the embedder: change it when the model changes. */
  readonly model: string;
  /** How long one search waits for its embeddings, in milliseconds. */
  readonly timeoutMs: number;
  /** The most texts one `embed` call gets. */
  readonly batch: number;
}

/** The most characters of a memory that are embedded: its key, description and body's start. */
export const EMBED_CHARS = 8_000;

/** What a search's embedding gave: unit vectors for the query and each memory, or why not. */
export type Embedded =
  | { readonly ok: true; readonly query: Float32Array; readonly docs: Float32Array[] }
  | { readonly ok: false; readonly reason: string };

interface Cached {
  /** The SHA-256 of the model's name and the text embedded: the entry revision it is for. */
  readonly hash: Uint8Array;
  readonly vector: Float32Array;
}

// What this process knows of a memory, per store and model: the text it last saw, its hash and
// (once known) its vector, so a search over unchanged memories hashes, reads and copies nothing.
interface Known {
  readonly description: string;
  readonly content: string;
  readonly hash: Uint8Array;
  readonly vector: Float32Array | undefined;
}

const KNOWN = new WeakMap<Store, Map<string, Map<string, Known>>>();

function knownOf(store: Store, model: string): Map<string, Known> {
  let models = KNOWN.get(store);
  if (models === undefined) KNOWN.set(store, models = new Map());
  let known = models.get(model);
  if (known === undefined) models.set(model, known = new Map());
  return known;
}

/** The vector cache of one store and embedder (a search tool's). */
export class VectorCache {
  readonly #s: EmbedSettings;
  readonly #sidecar: StoreSidecar | undefined;
  readonly #space: string;
  readonly #known: Map<string, Known>;
  readonly #store: Store;

  constructor(store: Store, settings: EmbedSettings) {
    this.#store = store;
    this.#s = settings;
    this.#sidecar = sidecarOf(store);
    this.#space = `vec-${createHash("sha256").update(settings.model).digest("hex").slice(0, 24)}`;
    this.#known = knownOf(store, settings.model);
  }

  /** The query's vector and every doc's, embedding only what the cache lacks. */
  async embed(query: string, docs: readonly KeyedEntry[], call: CallOptions): Promise<Embedded> {
    const known = this.#known;
    const hashes = docs.map((d) => {
      const k = known.get(d.key);
      return k !== undefined && k.content === d.content && k.description === d.description
        ? k.hash
        : this.#hash(d);
    });
    const found = docs.map((d, i) => {
      const k = known.get(d.key);
      return k?.vector !== undefined && same(k.hash, hashes[i]!) ? k.vector : undefined;
    });
    // The sidecar is read unless this process knows every memory's vector, and no other's.
    const live = new Set(docs.map((d) => d.key));
    const stale = found.includes(undefined) || [...known.keys()].some((k) => !live.has(k));
    const stored = stale ? await this.#read(call) : new Map<string, Cached>();
    docs.forEach((d, i) => {
      const c = stored.get(d.key);
      if (found[i] === undefined && c !== undefined && same(c.hash, hashes[i]!)) {
        found[i] = c.vector;
      }
    });
    const timer = new AbortController();
    const timeout = setTimeout(() => timer.abort(), this.#s.timeoutMs);
    const signal = call.signal === undefined
      ? timer.signal
      : AbortSignal.any([timer.signal, call.signal]);
    const fresh = new Map<string, Cached>();
    let queryVector: Float32Array | undefined;
    let reason: string | undefined;
    try {
      // The query first, then what the cache lacks, and what the query showed to be of another
      // dimension (cached from another model under the same name).
      queryVector = (await this.#embedAll([query], { signal, kind: "query" }))[0]!;
      const dim = queryVector.length;
      const need = found.flatMap((v, i) => v === undefined || v.length !== dim ? [i] : []);
      for (let at = 0; at < need.length; at += this.#s.batch) {
        const part = need.slice(at, at + this.#s.batch);
        const vectors = await this.#embedAll(
          part.map((i) => textOf(docs[i]!)),
          { signal, kind: "document" },
          dim,
        );
        part.forEach((i, j) => {
          found[i] = vectors[j]!;
          fresh.set(docs[i]!.key, { hash: hashes[i]!, vector: vectors[j]! });
        });
      }
    } catch (e) {
      reason = e instanceof EmbedError
        ? e.message
        : timer.signal.aborted
        ? `the embedder took longer than ${formatMs(this.#s.timeoutMs)}`
        : call.signal?.aborted
        ? "the search was cancelled"
        : "the embedder failed";
    } finally {
      clearTimeout(timeout);
    }
    // What this process knows now, and the sidecar kept in step: what was embedded, and no
    // record of a memory that is gone.
    known.clear();
    docs.forEach((d, i) => {
      const { description, content } = d;
      known.set(d.key, { description, content, hash: hashes[i]!, vector: found[i] });
    });
    const gone = [...stored.keys()].filter((k) => !live.has(k));
    await this.#keep(fresh, gone, call);
    if (reason !== undefined || queryVector === undefined) {
      return { ok: false, reason: reason ?? "the embedder failed" };
    }
    return { ok: true, query: queryVector, docs: found as Float32Array[] };
  }

  // Embeds `texts` in one call, checking what comes back; unit vectors of dimension `dim`.
  async #embedAll(texts: string[], call: EmbedCall, dim?: number): Promise<Float32Array[]> {
    const { signal } = call;
    const answer = await Promise.race([
      this.#s.embed(texts, call),
      new Promise<never>((_, reject) => {
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      }),
    ]);
    if (!Array.isArray(answer) || answer.length !== texts.length) {
      const n = Array.isArray(answer) ? answer.length : 0;
      throw new EmbedError(`the embedder answered ${n} vectors for ${texts.length} texts`);
    }
    const want = dim ?? (answer[0] as ArrayLike<number> | undefined)?.length ?? 0;
    return answer.map((v) => {
      if (v === null || typeof v !== "object" || typeof v.length !== "number") {
        throw new EmbedError("the embedder answered something that is not a vector");
      }
      if (v.length !== want || want === 0) {
        throw new EmbedError(`the embedder answered vectors of ${v.length} and ${want} dimensions`);
      }
      return unit(v);
    });
  }

  async #read(call: CallOptions): Promise<Map<string, Cached>> {
    const out = new Map<string, Cached>();
    if (this.#sidecar === undefined) return out;
    let records: Map<string, Uint8Array>;
    try {
      records = await this.#sidecar.read(this.#space, call);
    } catch {
      return out;
    }
    for (const [key, bytes] of records) {
      const c = decode(bytes);
      if (c !== undefined) out.set(key, c);
    }
    return out;
  }

  // Keeps what was embedded in the sidecar and drops its records of memories that are gone; a
  // sidecar that fails keeps nothing (this process still knows; the next one embeds again).
  async #keep(fresh: ReadonlyMap<string, Cached>, gone: string[], call: CallOptions) {
    if (this.#sidecar?.update === undefined || (fresh.size === 0 && gone.length === 0)) return;
    const put = new Map([...fresh].map(([key, c]) => [key, encode(c)]));
    try {
      await this.#sidecar.update(this.#space, { put, remove: gone }, call);
      if (fresh.size === 0) return;
      const moved = await this.#moved(fresh, call);
      if (moved.length > 0) {
        await this.#sidecar.update(this.#space, { put: new Map(), remove: moved }, call);
      }
    } catch {
      // A cache.
    }
  }

  // The keys of `fresh` that no longer hold the text embedded (deleted, purged, changed) now
  // that their records are written: a purge that ran meanwhile dropped the key's records before
  // these landed. Read one by one when they are few, else in one pass.
  async #moved(fresh: ReadonlyMap<string, Cached>, call: CallOptions): Promise<string[]> {
    const now = new Map<string, Uint8Array>();
    if (fresh.size <= RECHECK_ONE_BY_ONE) {
      await Promise.all([...fresh.keys()].map(async (key) => {
        try {
          now.set(key, this.#hash({ key, ...(await this.#store.read(key, call)) }));
        } catch (e) {
          if (!(e instanceof NotFoundError)) throw e;
        }
      }));
    } else {
      for (const d of await readAllEntries(this.#store, call)) {
        if (fresh.has(d.key)) now.set(d.key, this.#hash(d));
      }
    }
    return [...fresh].flatMap(([key, c]) => {
      const h = now.get(key);
      return h !== undefined && same(h, c.hash) ? [] : [key];
    });
  }

  // The SHA-256 of the model's name and the text embedded, hashed from its parts when it is whole
  // (the same bytes, without building the text).
  #hash(d: KeyedEntry): Uint8Array {
    const h = createHash("sha256").update(this.#s.model).update("\n");
    if (d.key.length + d.description.length + 3 + d.content.length > EMBED_CHARS) {
      return h.update(textOf(d)).digest();
    }
    return h.update(d.key).update("\n").update(d.description).update("\n\n").update(d.content)
      .digest();
  }
}

// At most this many keys embedded by one search are looked at again one by one.
const RECHECK_ONE_BY_ONE = 16;

/** A refusal of what the embedder answered, in words for the model. */
class EmbedError extends Error {}

// What is embedded of a memory: its key, description and the start of its body.
function textOf(d: KeyedEntry): string {
  const text = `${d.key}\n${d.description}\n\n${d.content}`;
  if (text.length <= EMBED_CHARS) return text;
  const end = EMBED_CHARS - (isLow(text.charCodeAt(EMBED_CHARS)) ? 1 : 0);
  return text.slice(0, end);
}

function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

// `v` scaled to length 1 (all zeros stays zeros: it is near nothing).
function unit(v: ArrayLike<number>): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) {
    const x = v[i]!;
    if (typeof x !== "number" || !Number.isFinite(x)) {
      throw new EmbedError("the embedder answered a vector holding a value that is not a number");
    }
    sum += x * x;
  }
  const norm = Math.sqrt(sum);
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = norm === 0 ? 0 : v[i]! / norm;
  return out;
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const HASH = 32;

function same(a: Uint8Array | undefined, b: Uint8Array): boolean {
  if (a === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// A record: the hash (32 bytes), then the vector's floats, little-endian.
function encode(c: Cached): Uint8Array {
  const out = new Uint8Array(HASH + c.vector.length * 4);
  out.set(c.hash);
  const view = new DataView(out.buffer);
  c.vector.forEach((x, i) => view.setFloat32(HASH + i * 4, x, true));
  return out;
}

// A record's vector is viewed where it lies when it can be (a sidecar hands them aligned), else
// copied. A value that is not a number is found by the ranking (see _hybrid.ts), not here: a
// search reads every record, and looking at every number would cost more than the ranking.
function decode(bytes: Uint8Array): Cached | undefined {
  if (bytes.length <= HASH || (bytes.length - HASH) % 4 !== 0) return undefined;
  const n = (bytes.length - HASH) / 4;
  const at = bytes.byteOffset + HASH;
  let vector: Float32Array;
  if (LITTLE_ENDIAN && at % 4 === 0) vector = new Float32Array(bytes.buffer, at, n);
  else {
    const view = new DataView(bytes.buffer, at, n * 4);
    vector = Float32Array.from({ length: n }, (_, i) => view.getFloat32(i * 4, true));
  }
  return { hash: bytes.subarray(0, HASH), vector };
}
