// What a version of a jetstream memory carries besides its entry: NATS headers with the chain
// format, its place in the key's chain, its operation, the writer's clock, run, actor, path, tool
// call and taint, and its link (the previous version's hash and its own). The value is the entry's
// bytes as every backend writes them. Format 2 covers the bucket key (`<prefix>.<key>`), so every
// handle verifies a version alike whatever its prefix (docs/design/history.md).

import type { MsgHdrs } from "@nats-io/nats-core";
import {
  badChainField,
  type ChainFields,
  chainHash,
  type EntryDigest,
  GENESIS,
  isChainHash,
} from "../../store/chain.ts";
import type { Version } from "../../store/types.ts";
import type { Call } from "../../store/backend.ts";

/** The header names. */
export const H = {
  format: "Agentmem-Format",
  seq: "Agentmem-Seq",
  op: "Agentmem-Op",
  at: "Agentmem-At",
  run: "Agentmem-Run",
  actor: "Agentmem-Actor",
  via: "Agentmem-Via",
  call: "Agentmem-Call",
  tainted: "Agentmem-Tainted",
  prev: "Agentmem-Prev",
  hash: "Agentmem-Hash",
} as const;

/**
 * The most bytes the version headers add to a message: every name and separator, with run and
 * actor at 128 characters, the path at 64, the tool call id at 256, two hashes and 16-digit
 * numbers. The server counts headers against the bucket's max value size.
 */
export const VERSION_HEADER_BYTES = [
  [H.format, 1],
  [H.seq, 16],
  [H.op, 6],
  [H.at, 24],
  [H.run, 128],
  [H.actor, 128],
  [H.via, 64],
  [H.call, 256],
  [H.tainted, 4],
  [H.prev, 64],
  [H.hash, 64],
].reduce((sum, [name, value]) => sum + String(name).length + 2 + Number(value) + 2, 0);

/** What format 1 took (no format or sequence header): the least a bucket made before took. */
export const VERSION_HEADER_BYTES_FORMAT_1 = VERSION_HEADER_BYTES -
  (H.format.length + 2 + 1 + 2) - (H.seq.length + 2 + 16 + 2);

/**
 * One version's record, as its headers hold it: what the chain hash covers (its `at` the writer's
 * clock), the previous version's hash (or GENESIS) and its own. Format 1 has no `seq`.
 */
export interface VersionRecord extends Omit<ChainFields, "key"> {
  readonly format: 1 | 2;
  readonly prev: string;
  readonly hash: string;
}

/**
 * Where a new version chains to: the version before it, its hash and its place (0 when that
 * version is of format 1, which has none: the new version is then the first of format 2).
 */
export interface Link {
  readonly hash: string;
  readonly seq: number;
}

/** The link a record leaves for the version after it. */
export function linkOf(r: VersionRecord): Link {
  return { hash: r.hash, seq: r.seq ?? 0 };
}

/** What a new version is: its chain name (the bucket key), what it does, and what it follows. */
export interface NewVersion {
  /** The bucket key, `<prefix>.<key>` (or the key with prefix ""). */
  readonly name: string;
  readonly op: VersionRecord["op"];
  readonly call: Call;
  /** The version it follows; none for a key's first version ever. */
  readonly after: Link | undefined;
  /** The writer's clock, in milliseconds since the epoch. */
  readonly now: number;
}

/** The record of a new version (format 2) writing `entry` (empty for a delete). */
export function newRecord(v: NewVersion, entry: Uint8Array): VersionRecord {
  const scope = v.call.scope;
  const fields = {
    seq: (v.after?.seq ?? 0) + 1,
    op: v.op,
    at: new Date(v.now).toISOString(),
    run: scope?.run,
    actor: scope?.actor,
    via: v.call.via,
    callId: v.call.callId,
    tainted: scope?.tainted ?? false,
  };
  const prev = v.after?.hash ?? GENESIS;
  return {
    format: 2,
    ...fields,
    prev,
    hash: chainHash(prev, { ...fields, key: v.name }, entry, 2),
  };
}

/** Writes `r` into `h`. */
export function setRecord(h: Pick<MsgHdrs, "set">, r: VersionRecord): void {
  if (r.format === 2) {
    h.set(H.format, "2");
    h.set(H.seq, String(r.seq));
  }
  h.set(H.op, r.op);
  h.set(H.at, r.at);
  if (r.run !== undefined) h.set(H.run, r.run);
  if (r.actor !== undefined) h.set(H.actor, r.actor);
  h.set(H.via, r.via);
  if (r.callId !== undefined) h.set(H.call, r.callId);
  if (r.tainted) h.set(H.tainted, "true");
  h.set(H.prev, r.prev);
  h.set(H.hash, r.hash);
}

/** A record read back: the record, none (a message written without history), or damage. */
export type ReadRecord =
  | { readonly record: VersionRecord; readonly damaged?: undefined }
  | { readonly record: undefined; readonly damaged?: string | undefined };

/** What a record is read from: a message's headers, or a packed version's (see pack.ts). */
export interface HeaderSource {
  has(name: string): boolean;
  get(name: string): string;
}

const SEQ = /^[1-9][0-9]{0,15}$/;

/** Whether `h` carries a version record (well formed or not: `readRecord` checks it). */
export function hasRecord(h: HeaderSource | undefined): boolean {
  return h !== undefined && (h.has(H.op) || h.has(H.format));
}

/** The record in `h`, checked field by field. */
export function readRecord(h: HeaderSource | undefined): ReadRecord {
  const get = (name: string): string | undefined => {
    if (h === undefined || !h.has(name)) return undefined;
    return h.get(name);
  };
  const op = get(H.op);
  const format = get(H.format);
  if (op === undefined && format === undefined) return { record: undefined };
  const bad = (field: string) => ({ record: undefined, damaged: `its "${field}" header is bad` });
  if (format !== undefined && format !== "2") return bad(H.format);
  const seqText = get(H.seq);
  if (format === "2" && (seqText === undefined || !SEQ.test(seqText))) return bad(H.seq);
  const [at, run, actor, via, callId] = [H.at, H.run, H.actor, H.via, H.call].map(get);
  const field = badChainField({ op, at, run, actor, via, callId });
  if (field !== undefined) return bad(field === "callId" ? H.call : H[field]);
  const tainted = get(H.tainted);
  if (tainted !== undefined && tainted !== "true") return bad(H.tainted);
  const prev = get(H.prev);
  if (!isChainHash(prev)) return bad(H.prev);
  const hash = get(H.hash);
  if (!isChainHash(hash)) return bad(H.hash);
  return {
    record: {
      format: format === "2" ? 2 : 1,
      seq: format === "2" ? Number(seqText) : undefined,
      op: op as VersionRecord["op"],
      at: at as string, // checked by badChainField, as via is
      run,
      actor,
      via: via as string,
      callId,
      tainted: tainted === "true",
      prev,
      hash,
    },
  };
}

/**
 * Whether a record's hash matches its fields and the entry it holds, under the chain name
 * `name` (the bucket key). Format 1 covered the key under the prefix of the handle that wrote
 * it, which a prefix has no dot to hide: the bucket key itself, or what follows its first dot.
 */
export function hashMatches(
  r: VersionRecord,
  v: { readonly name: string; readonly entry: Uint8Array | EntryDigest },
): boolean {
  const { name, entry } = v;
  if (r.format === 2) return chainHash(r.prev, { ...r, key: name }, entry, 2) === r.hash;
  // Format 1 covers the bytes themselves: a digest alone proves nothing.
  if (!(entry instanceof Uint8Array)) return false;
  const dot = name.indexOf(".");
  const names = dot < 0 ? [name] : [name, name.slice(dot + 1)];
  return names.some((key) => chainHash(r.prev, { ...r, key }, entry, 1) === r.hash);
}

/** The public view of a version: its revision is the stream sequence it was written at. */
export function toVersion(
  v: {
    readonly key: string;
    readonly revision: number;
    readonly at: string;
    readonly description: string | undefined;
  },
  r: VersionRecord,
): Version {
  const { description } = v;
  return {
    key: v.key,
    revision: String(v.revision),
    op: r.op,
    at: v.at,
    ...(description === undefined || r.op === "delete" ? {} : { description }),
    ...(r.run === undefined ? {} : { run: r.run }),
    ...(r.actor === undefined ? {} : { actor: r.actor }),
    via: r.via,
    ...(r.callId === undefined ? {} : { callId: r.callId }),
    tainted: r.tainted,
  };
}

/**
 * A server timestamp in nanoseconds since the epoch (as a reply subject or header gives it) in
 * ISO 8601 UTC with microseconds, so versions written within one millisecond still sort.
 */
export function isoOfNanos(nanos: bigint): string {
  const ms = nanos / 1_000_000n;
  const micros = (nanos / 1_000n) % 1_000n;
  const base = new Date(Number(ms)).toISOString(); // ...T12:34:56.789Z
  return `${base.slice(0, -1)}${String(micros).padStart(3, "0")}Z`;
}

/** An RFC 3339 timestamp with up to nanoseconds (a stored message's) in the same form. */
export function isoOfTimestamp(ts: string): string {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(ts);
  if (m === null) return new Date(ts).toISOString();
  const [, whole, fraction = "", zone] = m;
  if (zone !== "Z") return new Date(ts).toISOString();
  return `${whole}.${fraction.padEnd(6, "0").slice(0, 6)}Z`;
}
