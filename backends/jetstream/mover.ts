// Moving a key's versions out of the bucket's stream into its history stream, so listing never
// pays for them (nats-server 2.10 makes a last-per-subject consumer visit every message block
// that holds the prefix's subjects: 20 versions per key cost a listing 1.4 to 2 times, and the
// markers of deleted keys are delivered one by one).
//
// Every write is one message on the key's subject, so a version exists exactly when its write
// does. Later, a mover copies the key's versions, oldest first, into packs on the key's history
// subject (`$KVH.<bucket>.<prefix>.<key>`, stream `KVH_<bucket>`), each pack expecting the last
// one (so two movers never copy the same version twice), and then purges what it copied from the
// key's subject: every version below the newest of a live key; everything, the delete marker
// included, of a deleted key. A crash at any point leaves each version in one place or both
// (readers take the union, by revision), and the key's newest message where it was.
//
// A purge is durable across a server crash only when the stream keeps a message older than
// everything it removes: nats-server 2.10.27 writes no tombstone for messages at the head of the
// stream, so after a SIGKILL they came back (10 of 10 trials, in which the deleted key came back
// with its oldest value). `agentmem bucket init` writes an anchor first into a new bucket, and
// nothing removes it; a key's subject is emptied only when a message older than all of it stays
// (the anchor, or the stream's first message when it is older). A stream that keeps one message
// per key (history off) loses messages through its limit, which writes no tombstone either: that
// is why such a bucket keeps its delete markers 30 minutes (see `MARKERS` in scan.ts).

import type { MsgHdrs, NatsConnection } from "@nats-io/nats-core";
import type { JetStreamClient, JetStreamManager, StoredMsg } from "@nats-io/jetstream";
import type { HistoryRetention } from "../../store/types.ts";
import { isWrongLastSequence } from "./errors.ts";
import { encodePack, MAX_PACK_BYTES, type Packed, packInfo } from "./pack.ts";
import { isoOfTimestamp, type Link, readRecord } from "./provenance.ts";
import { isMarkerMessage, readAll } from "./scan.ts";
import type { Deadline } from "./errors.ts";

const DAY_MS = 24 * 60 * 60 * 1000;
// How many times a mover starts over when another mover wrote a pack first.
const MAX_MOVE_ATTEMPTS = 4;

/** Where a keyspace's history is. */
export interface HistoryTarget {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly timeout: number;
  /** The bucket's stream (`KV_<bucket>`). */
  readonly stream: string;
  /** The history stream (`KVH_<bucket>`). */
  readonly hstream: string;
  /** What precedes a key in the bucket's subjects (`$KV.<bucket>.<prefix>.`). */
  readonly subjectPrefix: string;
  /** The same in the history stream (`$KVH.<bucket>.<prefix>.`). */
  readonly hsubjectPrefix: string;
  /** The anchor's sequence, when the bucket has one. */
  readonly anchor: number | undefined;
  readonly retention: HistoryRetention;
  /** `headers()` from the NATS client modules the opener loaded (see write.ts). */
  readonly headers: () => MsgHdrs;
}

/** What the history stream holds of a key. */
export interface Moved {
  /** The history stream sequence of its last pack (0: none). */
  readonly seq: number;
  /** The newest revision moved (0: none). */
  readonly to: number;
  /** Where the key's next version chains to, as the last pack says. */
  readonly last: Link | undefined;
}

// No pack yet.
const NOTHING_MOVED: Moved = Object.freeze({ seq: 0, to: 0, last: undefined });

/**
 * A stored message, read from the stream's leader (the stream API, not a direct get, which a
 * replica may answer from behind the leader: a read must see every acknowledged write).
 */
export async function getMessage(
  t: Pick<HistoryTarget, "jsm">,
  stream: string,
  query: { seq: number } | { last_by_subj: string } | { seq: number; next_by_subj: string },
): Promise<StoredMsg | null> {
  return await t.jsm.streams.getMessage(stream, query);
}

/** What the history stream holds of `key`: its last pack. */
export async function movedOf(t: HistoryTarget, key: string): Promise<Moved> {
  const m = await getMessage(t, t.hstream, { last_by_subj: t.hsubjectPrefix + key });
  if (m === null) return NOTHING_MOVED;
  const info = packInfo(m.header);
  // Something that is no pack (planted by hand) moves nothing; the next pack goes after it.
  return info === undefined
    ? { seq: m.seq, to: 0, last: undefined }
    : { seq: m.seq, to: info.to, last: info.last };
}

/**
 * One version as the bucket's stream holds it, ready to pack: its time is its record's (the
 * writer's clock, which the chain hash covers), or for a message without a record the server's.
 */
export function packedOf(m: Pick<StoredMsg, "seq" | "timestamp" | "header" | "data">): Packed {
  const read = readRecord(m.header);
  return {
    rev: m.seq,
    at: read.record?.at ?? isoOfTimestamp(m.timestamp),
    record: read.record,
    damaged: read.record === undefined ? read.damaged : undefined,
    entry: isMarkerMessage(m.header) ? new Uint8Array(0) : m.data,
  };
}

/**
 * Versions of one key a handle knows to be consecutive on the key's subject, oldest first: what it
 * wrote (each write expected the revision before it) and read. `after` is the revision just
 * before the first of them, when known.
 */
export interface Chain {
  readonly after: number | undefined;
  readonly versions: readonly Packed[];
}

/**
 * Moves `key`'s versions into the history stream and purges them from the bucket's stream (see
 * the top of this file), up to its newest version the caller knows of (`chain`'s last), or its
 * newest message. Versions the caller holds (`chain`) are packed as they are; the others are read.
 *
 * @returns What the history stream holds of the key now.
 */
export async function moveKey(
  t: HistoryTarget,
  key: string,
  d: Deadline,
  known: { moved?: Moved | undefined; chain?: Chain | undefined } = {},
): Promise<Moved> {
  const subject = t.subjectPrefix + key;
  const last = known.chain?.versions.at(-1);
  const head: { seq: number; marker: boolean } | undefined = last !== undefined
    ? { seq: last.rev, marker: last.record?.op === "delete" }
    : await getMessage(t, t.stream, { last_by_subj: subject }).then((m) =>
      m === null ? undefined : { seq: m.seq, marker: isMarkerMessage(m.header) }
    );
  let moved = known.moved ?? await movedOf(t, key);
  if (head === undefined) return moved;
  for (let attempt = 1; head.seq > moved.to; attempt++) {
    const unmoved = fromChain(known.chain, moved.to) ??
      await readUnmoved(t, subject, { after: moved.to, head: head.seq }, d);
    if (d.cancelled) return moved;
    try {
      moved = await publishPacks(t, key, unmoved, moved);
      break;
    } catch (e) {
      if (!isWrongLastSequence(e) || attempt >= MAX_MOVE_ATTEMPTS) throw e;
      // Another mover wrote a pack first: see what it moved.
      moved = await movedOf(t, key);
    }
  }
  if (d.cancelled) return moved;
  if (head.marker) {
    if (await mayEmpty(t, subject)) {
      await t.jsm.streams.purge(t.stream, { filter: subject, seq: head.seq + 1 });
    }
  } else {
    await t.jsm.streams.purge(t.stream, { filter: subject, seq: head.seq });
  }
  return moved;
}

// The versions after `movedTo` from what the caller holds, when it holds all of them.
function fromChain(chain: Chain | undefined, movedTo: number): Packed[] | undefined {
  if (chain === undefined || chain.versions.length === 0) return undefined;
  const at = chain.versions.findIndex((v) => v.rev === movedTo);
  if (at >= 0) return chain.versions.slice(at + 1);
  return chain.after === movedTo ? [...chain.versions] : undefined;
}

// Every message of the key after `range.after` up to `range.head`, from the bucket's stream.
async function readUnmoved(
  t: HistoryTarget,
  subject: string,
  range: { readonly after: number; readonly head: number },
  d: Deadline,
): Promise<Packed[]> {
  const { after, head } = range;
  const unmoved: Packed[] = [];
  for (let seq = after + 1; seq <= head && !d.cancelled;) {
    const m = await getMessage(t, t.stream, { seq, next_by_subj: subject });
    if (m === null || m.seq > head) break;
    unmoved.push(packedOf(m));
    seq = m.seq + 1;
  }
  return unmoved;
}

// Writes `versions` (oldest first) as packs after `moved`, each expecting the one before.
async function publishPacks(
  t: HistoryTarget,
  key: string,
  versions: readonly Packed[],
  moved: Moved,
): Promise<Moved> {
  const subject = t.hsubjectPrefix + key;
  let { seq, to, last } = moved;
  for (let i = 0; i < versions.length;) {
    const batch: Packed[] = [];
    let bytes = 0;
    while (
      i < versions.length && (batch.length === 0 || bytes + size(versions[i]!) <= MAX_PACK_BYTES)
    ) {
      bytes += size(versions[i]!);
      batch.push(versions[i++]!);
    }
    const pack = encodePack(batch, t.headers);
    const ack = await t.js.publish(subject, pack.data, {
      headers: pack.headers,
      expect: { lastSubjectSequence: seq },
    });
    seq = ack.seq;
    to = batch.at(-1)!.rev;
    const info = packInfo(pack.headers);
    last = info?.last ?? last;
  }
  return { seq, to, last };
}

function size(v: Packed): number {
  return v.entry.length + 1024;
}

// Whether `subject` may be purged to nothing durably: a message older than all of it stays in
// the stream (the anchor, or the stream's first message).
async function mayEmpty(t: HistoryTarget, subject: string): Promise<boolean> {
  // A bucket made by `bucket init` has its anchor first: every key's messages come after it.
  if (t.anchor === 1) return true;
  const [first, info] = await Promise.all([
    getMessage(t, t.stream, { seq: 1, next_by_subj: subject }),
    t.jsm.streams.info(t.stream),
  ]);
  if (first === null) return true;
  if (t.anchor !== undefined && t.anchor < first.seq) return true;
  return info.state.first_seq < first.seq;
}

/**
 * Removes packs the retention no longer keeps: those whose versions are all older than the newest
 * `versions` of the key and than `days`. Whole packs only, so a few more versions than the
 * retention asks for may stay (readers hide them); the last pack always stays.
 */
export async function prune(t: HistoryTarget, key: string, d: Deadline): Promise<void> {
  const { versions, days } = t.retention;
  const cutoff = Date.now() - days * DAY_MS;
  const subject = t.hsubjectPrefix + key;
  const packs: { seq: number; count: number; lastAt: number }[] = [];
  const { complete } = await readAll(t, t.hstream, subject, d, {
    lastPerSubject: false,
    headersOnly: true,
  }, (m) => {
    const info = packInfo(m.headers);
    // Something that is no pack is kept, and so is everything after it.
    packs.push({
      seq: m.seq,
      count: info?.count ?? versions,
      lastAt: info === undefined ? Number.POSITIVE_INFINITY : Date.parse(info.lastAt),
    });
  });
  if (!complete || packs.length < 2) return;
  // From the newest back: the packs holding the newest `versions` versions, or young ones.
  let newer = 0;
  let keepFrom = packs.length - 1;
  for (let i = packs.length - 1; i >= 0; i--) {
    const p = packs[i]!;
    if (newer < versions || !(p.lastAt < cutoff)) keepFrom = i;
    else break;
    newer += p.count;
  }
  if (keepFrom === 0) return;
  await t.jsm.streams.purge(t.hstream, { filter: subject, seq: packs[keepFrom]!.seq });
}
