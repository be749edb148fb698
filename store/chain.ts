// The tamper-evident link between versions: each version's hash covers the hash of the version
// before it, its place in the key's chain, its provenance and the SHA-256 of the entry it wrote,
// so a version edited, reordered or cut from the middle breaks the chain there, while a redacted
// version's bytes can go and its link stay. One definition for every backend, so `agentmem check`
// means the same on each (docs/design/history.md).

import { createHash } from "node:crypto";
import { PROVENANCE_ID } from "./scope.ts";

/** The `prev` of a key's first version ever written. */
export const GENESIS = "0".repeat(64);

/** The chain format this library writes: 2 covers the sequence and the entry's digest. */
export const CHAIN_FORMAT = 2;

/** What a version's hash covers besides the previous hash and the entry. */
export interface ChainFields {
  /**
   * The name the chain covers: the key on the file backend, the bucket key (`<prefix>.<key>`) on
   * jetstream, so every handle verifies a version the same way whatever its prefix.
   */
  readonly key: string;
  /** Format 2: the version's place in the key's chain (1 for its first version ever). */
  readonly seq?: number | undefined;
  readonly op: "create" | "update" | "delete";
  readonly at: string;
  readonly run?: string | undefined;
  readonly actor?: string | undefined;
  readonly via: string;
  readonly callId?: string | undefined;
  readonly tainted: boolean;
}

const CHAIN_OPS: ReadonlySet<string> = new Set(["create", "update", "delete"]);
/** A legal `via` (what made the call): 1 to 64 characters of `A-Z a-z 0-9 . _ : @ = -`. */
export const VIA_PATTERN = /^[A-Za-z0-9._:@=-]{1,64}$/;
/** A legal `callId`: 1 to 256 characters of `A-Z a-z 0-9 . _ : @ = -`. */
export const CALL_ID_PATTERN = /^[A-Za-z0-9._:@=-]{1,256}$/;

/** A version's provenance as read back from storage, not yet checked. */
export type StoredFields = {
  readonly [F in Exclude<keyof ChainFields, "key" | "tainted" | "seq">]: unknown;
};

/**
 * The first of a stored version's provenance fields that is not legal (what a writer of this
 * library could have written), or `undefined` when every one is.
 */
export function badChainField(f: StoredFields): keyof StoredFields | undefined {
  if (typeof f.op !== "string" || !CHAIN_OPS.has(f.op)) return "op";
  if (typeof f.at !== "string" || Number.isNaN(Date.parse(f.at))) return "at";
  for (const id of ["run", "actor"] as const) {
    const v = f[id];
    if (v !== undefined && (typeof v !== "string" || !PROVENANCE_ID.test(v))) return id;
  }
  if (typeof f.via !== "string" || !VIA_PATTERN.test(f.via)) return "via";
  const call = f.callId;
  if (call !== undefined && (typeof call !== "string" || !CALL_ID_PATTERN.test(call))) {
    return "callId";
  }
  return undefined;
}

const HEX = /^[0-9a-f]{64}$/;
const ENCODER = new TextEncoder();

/** What a version's hash covers of its entry: the entry's SHA-256 and its length in bytes. */
export interface EntryDigest {
  readonly sha256: string;
  readonly length: number;
}

/** The digest of `entry` (empty for a delete). */
export function digestOf(entry: Uint8Array): EntryDigest {
  return { sha256: createHash("sha256").update(entry).digest("hex"), length: entry.length };
}

/**
 * The SHA-256 (64 lower-case hex characters) chaining a version to `prev`.
 *
 * @param prev The previous version's hash, or `GENESIS`.
 * @param fields The version's place and provenance (format 2 needs `seq`).
 * @param entry The serialized entry it wrote (empty for a delete), or (format 2) its digest, which
 * is all a redacted version keeps.
 * @param format 2 (what this library writes) or 1 (versions written before format 2, which cover
 * the entry's bytes and not the sequence).
 */
export function chainHash(
  prev: string,
  fields: ChainFields,
  entry: Uint8Array | EntryDigest,
  format: 1 | 2 = CHAIN_FORMAT,
): string {
  if (format === 1) {
    if (!(entry instanceof Uint8Array)) throw new TypeError("format 1 hashes the entry's bytes");
    return chainHashV1(prev, fields, entry);
  }
  if (fields.seq === undefined) throw new TypeError("format 2 hashes the version's sequence");
  const digest = entry instanceof Uint8Array ? digestOf(entry) : entry;
  const head = JSON.stringify([
    "agentmem-version-2",
    prev,
    fields.key,
    fields.seq,
    fields.op,
    fields.at,
    fields.run ?? null,
    fields.actor ?? null,
    fields.via,
    fields.callId ?? null,
    fields.tainted,
    digest.sha256,
    digest.length,
  ]);
  return createHash("sha256").update(ENCODER.encode(head)).digest("hex");
}

function chainHashV1(prev: string, fields: ChainFields, entry: Uint8Array): string {
  const head = JSON.stringify([
    "agentmem-version-1",
    prev,
    fields.key,
    fields.op,
    fields.at,
    fields.run ?? null,
    fields.actor ?? null,
    fields.via,
    fields.callId ?? null,
    fields.tainted,
    entry.length,
  ]);
  return createHash("sha256").update(ENCODER.encode(head + "\n")).update(entry).digest("hex");
}

/** Whether `value` has the shape of a chain hash. */
export function isChainHash(value: unknown): value is string {
  return typeof value === "string" && HEX.test(value);
}
