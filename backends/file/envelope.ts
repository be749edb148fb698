// A file store's version record: one line in front of the entry, saying which version of the key
// the file is, who wrote it, how it chains to the version before, and in which chain format
// (`"f":2`; a line without it is format 1). A head file with history on is the line and the entry;
// its version file in `.history/<key>/<seq>.md` is the same file (a hard link), and a delete's is
// the line alone, as is a redacted version's (its line then keeps the entry's digest, `"red"`).
// A file without the line (history off) is an entry as before.
//
//   agentmem-version {"f":2,"seq":3,"op":"update","at":"2026-12-01T08:00:00.000Z",...}\n
//   ---\n
//   description: ...

import {
  badChainField,
  CHAIN_FORMAT,
  type ChainFields,
  chainHash,
  GENESIS,
  isChainHash,
  type StoredFields,
} from "../../store/chain.ts";
import type { Redaction, Version } from "../../store/types.ts";
import type { EntryDigest } from "../../store/chain.ts";

const PREFIX = "agentmem-version ";
const PREFIX_BYTES = new TextEncoder().encode(PREFIX);
const ENCODER = new TextEncoder();
const DECODER = new TextDecoder("utf-8", { fatal: true });
/** The most bytes a record line can take (ids at their limits fit in well under half). */
export const MAX_RECORD_BYTES = 2048;

/** A version's record, as the line holds it: its sequence, the chain's fields and its links. */
export interface VersionRecord extends Omit<ChainFields, "key" | "seq"> {
  /** The chain format its hash is in (store/chain.ts): 2, or 1 for versions written before. */
  readonly format: 1 | 2;
  readonly seq: number;
  /** The previous version's hash, or GENESIS. */
  readonly prev: string;
  /** This version's hash: chainHash(prev, fields, entry bytes). */
  readonly hash: string;
  /** Set when the version was redacted: the digest of the entry it held, and who, when, why. */
  readonly redacted?: RedactedEntry | undefined;
}

/** What a redacted version's line keeps of its entry, and the redaction. */
export interface RedactedEntry extends EntryDigest, Redaction {}

/** A new version's record before its hash is known (always written in format 2). */
export type RecordFields = Omit<VersionRecord, "hash" | "format">;

/** A file's bytes split into its record (when it has one) and the entry after it. */
export interface Split {
  readonly record: VersionRecord | undefined;
  readonly entry: Uint8Array;
}

/** The record and file bytes of a new version writing `entry` (empty for a delete). */
export function encodeVersion(
  version: RecordFields & { readonly key: string },
  entry: Uint8Array,
): { record: VersionRecord; bytes: Uint8Array } {
  const { key: _key, ...fields } = version;
  const hash = chainHash(fields.prev, version, entry, CHAIN_FORMAT);
  const record: VersionRecord = { ...fields, format: CHAIN_FORMAT, hash };
  const line = recordLine(record);
  const bytes = new Uint8Array(line.length + entry.length);
  bytes.set(line);
  bytes.set(entry, line.length);
  return { record, bytes };
}

/** The line of `record` (a redacted one keeps its digest and redaction in it). */
export function recordLine(record: VersionRecord): Uint8Array {
  const red = record.redacted;
  return ENCODER.encode(
    PREFIX + JSON.stringify({
      f: CHAIN_FORMAT,
      seq: record.seq,
      op: record.op,
      at: record.at,
      ...(record.run === undefined ? {} : { run: record.run }),
      ...(record.actor === undefined ? {} : { actor: record.actor }),
      via: record.via,
      ...(record.callId === undefined ? {} : { call: record.callId }),
      tainted: record.tainted,
      prev: record.prev,
      hash: record.hash,
      ...(red === undefined ? {} : {
        red: {
          sha256: red.sha256,
          len: red.length,
          at: red.at,
          ...(red.actor === undefined ? {} : { actor: red.actor }),
          reason: red.reason,
        },
      }),
    }) + "\n",
  );
}

/** Whether `bytes` start with a record line (a damaged one included). */
export function hasRecord(bytes: Uint8Array): boolean {
  if (bytes.length < PREFIX_BYTES.length) return false;
  for (let i = 0; i < PREFIX_BYTES.length; i++) if (bytes[i] !== PREFIX_BYTES[i]) return false;
  return true;
}

/**
 * Splits a file into its record and its entry. A file without a record line is all entry.
 *
 * @throws {Error} (a plain one, with the reason) when the record line is there but damaged.
 */
export function splitVersion(bytes: Uint8Array): Split {
  if (!hasRecord(bytes)) return { record: undefined, entry: bytes };
  const end = bytes.indexOf(0x0a);
  if (end < 0 || end > MAX_RECORD_BYTES) throw new Error("its version record line is cut short");
  let raw: unknown;
  try {
    raw = JSON.parse(DECODER.decode(bytes.subarray(PREFIX_BYTES.length, end)));
  } catch {
    throw new Error("its version record is not valid JSON");
  }
  return { record: checkRecord(raw), entry: bytes.subarray(end + 1) };
}

function checkRecord(raw: unknown): VersionRecord {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new Error("its version record is not an object");
  }
  const r = raw as Record<string, unknown>;
  const bad = (field: string) => new Error(`its version record has a bad "${field}"`);
  if (r.f !== undefined && r.f !== 2) throw bad("f");
  if (!Number.isSafeInteger(r.seq) || (r.seq as number) < 1) throw bad("seq");
  const field = badChainField({ ...r, callId: r.call } as StoredFields);
  if (field !== undefined) throw bad(field === "callId" ? "call" : field);
  if (typeof r.tainted !== "boolean") throw bad("tainted");
  if (!isChainHash(r.prev)) throw bad("prev");
  if (!isChainHash(r.hash)) throw bad("hash");
  const redacted = r.red === undefined ? undefined : checkRedacted(r.red);
  if (redacted === "bad" || (redacted !== undefined && r.f !== 2)) throw bad("red");
  return {
    format: r.f === 2 ? 2 : 1,
    seq: r.seq as number,
    op: r.op as VersionRecord["op"],
    at: r.at as string, // checked by badChainField, as via is
    run: r.run as string | undefined,
    actor: r.actor as string | undefined,
    via: r.via as string,
    callId: r.call as string | undefined,
    tainted: r.tainted,
    prev: r.prev,
    hash: r.hash,
    ...(redacted === undefined ? {} : { redacted }),
  };
}

function checkRedacted(raw: unknown): RedactedEntry | "bad" {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return "bad";
  const r = raw as Record<string, unknown>;
  if (!isChainHash(r.sha256) || !Number.isSafeInteger(r.len) || (r.len as number) < 0) return "bad";
  if (typeof r.at !== "string" || Number.isNaN(Date.parse(r.at))) return "bad";
  if (r.actor !== undefined && typeof r.actor !== "string") return "bad";
  if (typeof r.reason !== "string") return "bad";
  return {
    sha256: r.sha256,
    length: r.len as number,
    at: r.at,
    ...(r.actor === undefined ? {} : { actor: r.actor as string }),
    reason: r.reason,
  };
}

/** Whether a record's hash matches what it says and the entry it holds. */
export function hashMatches(
  version: { readonly key: string; readonly record: VersionRecord },
  entry: Uint8Array,
): boolean {
  const { key, record } = version;
  // A redacted version holds no entry: its hash is checked against the digest its line keeps.
  if (record.redacted !== undefined) {
    return entry.length === 0 &&
      chainHash(record.prev, { ...record, key }, record.redacted, 2) === record.hash;
  }
  return chainHash(record.prev, { ...record, key }, entry, record.format) === record.hash;
}

/** The public view of a record. */
export function toVersion(key: string, r: VersionRecord, description?: string): Version {
  return {
    key,
    revision: String(r.seq),
    op: r.op,
    at: r.at,
    ...(description === undefined ? {} : { description }),
    ...(r.run === undefined ? {} : { run: r.run }),
    ...(r.actor === undefined ? {} : { actor: r.actor }),
    via: r.via,
    ...(r.callId === undefined ? {} : { callId: r.callId }),
    tainted: r.tainted,
    ...(r.redacted === undefined ? {} : {
      redacted: {
        at: r.redacted.at,
        ...(r.redacted.actor === undefined ? {} : { actor: r.redacted.actor }),
        reason: r.redacted.reason,
      },
    }),
  };
}

export { GENESIS };
