// The tamper-evident link between versions: each version's hash covers the hash of the version
// before it, its own provenance and the entry bytes it wrote, so a version edited by hand, or one
// missing from the middle of a key's history, breaks the chain at that point. One definition for
// every backend, so `agentmem check` means the same thing on each.

import { createHash } from "node:crypto";
import { PROVENANCE_ID } from "./scope.ts";

/** The `prev` of a key's first version ever written. */
export const GENESIS = "0".repeat(64);

/** What a version's hash covers besides the previous hash and the entry bytes. */
export interface ChainFields {
  readonly key: string;
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
  readonly [F in Exclude<keyof ChainFields, "key" | "tainted">]: unknown;
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

/**
 * The SHA-256 (64 lower-case hex characters) chaining a version to `prev`.
 *
 * @param prev The previous version's hash, or `GENESIS`.
 * @param fields The version's provenance.
 * @param entry The serialized entry it wrote (empty for a delete).
 */
export function chainHash(prev: string, fields: ChainFields, entry: Uint8Array): string {
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
