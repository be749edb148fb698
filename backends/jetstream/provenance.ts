// What a version of a jetstream memory carries besides its entry: NATS headers with its
// operation, the writer's clock, run, actor, path, tool call and taint, and its link in the chain
// (the previous version's hash and its own). The value
// is the entry's bytes as every backend writes them, so entries move between backends unchanged.
//
// A version's time (`Version.at`) is its writer's clock (`Agentmem-At`), as with the file backend:
// the hash covers it (it is made before the server stamps the message, and the server's stamp is
// covered by nothing), and a version keeps it when it is moved to the history stream.

import type { MsgHdrs } from "@nats-io/nats-core";
import {
  badChainField,
  type ChainFields,
  chainHash,
  GENESIS,
  isChainHash,
} from "../../store/chain.ts";
import type { Version } from "../../store/types.ts";
import type { Call } from "../../store/backend.ts";

/** The header names. */
export const H = {
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

/**
 * One version's record, as its headers hold it: what the chain hash covers (its `at` the writer's
 * clock when it wrote), the previous version's hash (or GENESIS) and its own.
 */
export interface VersionRecord extends Omit<ChainFields, "key"> {
  readonly prev: string;
  /** chainHash(prev, fields, entry bytes). */
  readonly hash: string;
}

/** Where a new version chains to: the version before it (none: the key's first). */
export interface Link {
  readonly hash: string;
}

/** The record of a new version writing `entry` (empty for a delete) after `before`. */
export function newRecord(
  key: string,
  op: VersionRecord["op"],
  call: Call,
  before: Link | undefined,
  entry: Uint8Array,
): VersionRecord {
  const scope = call.scope;
  const fields = {
    op,
    at: new Date().toISOString(),
    run: scope?.run,
    actor: scope?.actor,
    via: call.via,
    callId: call.callId,
    tainted: scope?.tainted ?? false,
  };
  const prev = before?.hash ?? GENESIS;
  return { ...fields, prev, hash: chainHash(prev, { ...fields, key }, entry, 1) };
}

/** Writes `r` into `h`. */
export function setRecord(h: Pick<MsgHdrs, "set">, r: VersionRecord): void {
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
  | { readonly record: VersionRecord }
  | { readonly record: undefined; readonly damaged?: string };

/** What a record is read from: a message's headers, or a packed version's (see pack.ts). */
export interface HeaderSource {
  has(name: string): boolean;
  get(name: string): string;
}

/** The record in `h`, checked field by field. */
export function readRecord(h: HeaderSource | undefined): ReadRecord {
  const get = (name: string): string | undefined => {
    if (h === undefined || !h.has(name)) return undefined;
    return h.get(name);
  };
  const op = get(H.op);
  if (op === undefined) return { record: undefined };
  const bad = (field: string) => ({ record: undefined, damaged: `its "${field}" header is bad` });
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

/** Whether a record's hash matches its fields and the entry it holds. */
export function hashMatches(key: string, r: VersionRecord, entry: Uint8Array): boolean {
  return chainHash(r.prev, { ...r, key }, entry, 1) === r.hash;
}

/** The public view of a version: its revision is the stream sequence it was written at. */
export function toVersion(
  key: string,
  revision: number,
  r: VersionRecord,
  description: string | undefined,
): Version {
  return {
    key,
    revision: String(revision),
    op: r.op,
    at: r.at,
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
