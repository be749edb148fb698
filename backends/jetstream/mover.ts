// Moving a key's versions from its subject in the bucket's stream into packs on its subject in
// the history stream, so listing never meets them; emptying a deleted key's subject; and cutting
// by retention, which leaves a record of where it cut. A pack is published before anything it
// holds is purged, so every version is always in one place or both (docs/design/history.md,
// "Jetstream").

import type { MsgHdrs, NatsConnection } from "@nats-io/nats-core";
import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import type { HistoryRetention } from "../../store/types.ts";
import { cutCount } from "../../store/retention.ts";
import { Deadline, isWrongLastSequence } from "./errors.ts";
import { getMessage, type MessageSource, readSubject, type Stored } from "./messages.ts";
import {
  type CutRecord,
  decodePack,
  EMPTY_STATE,
  encodeCut,
  encodePack,
  historyMessage,
  type KeyState,
  MAX_PACK_BYTES,
  type Packed,
} from "./pack.ts";
import { readRecord } from "./provenance.ts";
import { isMarkerMessage } from "./scan.ts";
import { streamInfo } from "./direct.ts";
import { publish, purge } from "./write.ts";

const DAY_MS = 24 * 60 * 60 * 1000;
// How many times a mover starts over when another mover wrote to the history subject first.
const MAX_MOVE_ATTEMPTS = 4;

/** Where a keyspace's history is. */
export interface HistoryTarget extends MessageSource {
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
  /** What precedes a key in a chain name (`<prefix>.`, or nothing). */
  readonly namePrefix: string;
  /** The anchor's sequence, when the bucket has one. */
  readonly anchor: number | undefined;
  readonly retention: HistoryRetention;
  /** `headers()` from the NATS client modules the opener loaded (see write.ts). */
  readonly headers: () => MsgHdrs;
  /** Whether a purge may move a consumer past what it has not delivered (see pull.ts). */
  readonly purgesSkip: boolean;
}

/** What the history stream holds of a key: its last message's sequence (0: none) and state. */
export interface Moved {
  readonly seq: number;
  readonly state: KeyState;
}

const NOTHING_MOVED: Moved = Object.freeze({ seq: 0, state: EMPTY_STATE });

/** What the history stream holds of `key`, from its last message there. */
export async function movedOf(t: HistoryTarget, key: string): Promise<Moved> {
  const m = await getMessage(t, { stream: t.hstream, last_by_subj: t.hsubjectPrefix + key });
  if (m === null) return NOTHING_MOVED;
  // Something this library never wrote (planted by hand) says nothing; the next pack follows it.
  return { seq: m.seq, state: historyMessage(m.header)?.state ?? EMPTY_STATE };
}

/** One version as the bucket's stream holds it, ready to pack, with the server's time. */
export function packedOf(m: Stored): Packed {
  const read = readRecord(m.header);
  const marker = isMarkerMessage(m.header);
  return {
    rev: m.seq,
    at: m.at,
    serverTime: true,
    record: read.record,
    damaged: read.damaged,
    entry: marker ? new Uint8Array(0) : m.data,
    marker,
  };
}

/**
 * Revisions a handle knows to be consecutive on a key's subject, oldest first: every message on
 * the subject after `after` up to the last of `revs` is one of them (`after` 0: the subject held
 * nothing but what the history stream holds).
 */
export interface Run {
  readonly after: number;
  readonly revs: readonly number[];
}

/**
 * Revisions a handle knows to be consecutive on a key's subject, oldest first: every message on
 * the subject after `after` up to the last of `revs` is one of them (`after` 0: the subject held
 * nothing but what the history stream holds).
 */
export interface Run {
  readonly after: number;
  readonly revs: readonly number[];
}

/** What a move found and did. */
export interface MoveResult {
  /** The history stream's state of the key after the move. */
  readonly moved: Moved;
  /** The key's newest message, as the move found it; none when its subject was empty. */
  readonly head: Packed | undefined;
}

/**
 * Moves every version of `key` not yet in the history stream there, in packs, then (a live key)
 * purges what the packs hold from its subject but its newest message. A deleted key's subject is
 * emptied later (`emptyKey`), by the caller.
 *
 * `guess` is what the caller last learnt the history stream holds of the key (a look or its own
 * move). It saves the look when the caller's run goes on from it (nobody else wrote the key
 * since), and even then is trusted only by a pack published over it: the publish expects the
 * history subject's last message to be the one it names, so a stale guess fails there and the
 * key is looked at again. A guess with nothing to move is looked at again at once.
 */
export async function moveKey(
  t: HistoryTarget,
  k: { readonly key: string; readonly run?: Run | undefined; readonly guess?: Moved | undefined },
): Promise<MoveResult> {
  const { key, run } = k;
  const subject = t.subjectPrefix + key;
  const guess = run !== undefined && k.guess !== undefined && covers(run, k.guess.state.to)
    ? k.guess
    : undefined;
  let moved = guess ?? await movedOf(t, key);
  let known = run === undefined ? undefined : await fromRun(t, { subject, run, moved });
  const head = known?.at(-1) ??
    await getMessage(t, { stream: t.stream, last_by_subj: subject }).then((m) =>
      m === null ? undefined : packedOf(m)
    );
  if (head === undefined) return { moved, head: undefined };
  if (guess !== undefined && head.rev <= moved.state.to) {
    // Nothing would be published to check the guess against: the purge below needs the truth.
    moved = await movedOf(t, key);
    known = undefined;
  }
  for (let attempt = 1; head.rev > moved.state.to; attempt++) {
    const unmoved = known ??
      (await readSubject(t, { stream: t.stream, subject, after: moved.state.to, until: head.rev }))
        .map(packedOf);
    try {
      moved = await publishPacks(t, { key, versions: unmoved, moved });
      break;
    } catch (e) {
      if (!isWrongLastSequence(e) || attempt >= MAX_MOVE_ATTEMPTS) throw e;
      moved = await movedOf(t, key); // another mover wrote first: see what it moved
      known = undefined;
    }
  }
  if (!head.marker) {
    await purge(t, { stream: t.stream, filter: subject, seq: head.rev, ms: t.timeout });
  }
  return { moved, head };
}

// Whether `run` names every message on the subject after revision `to`, and at least one.
function covers(run: Run, to: number): boolean {
  return (run.after <= to || run.revs.includes(to)) && run.revs.some((rev) => rev > to);
}

// The messages a handle's run names after what the history stream holds, read in parallel;
// `undefined` when the run does not cover them all (the subject must be read).
async function fromRun(
  t: HistoryTarget,
  r: { readonly subject: string; readonly run: Run; readonly moved: Moved },
): Promise<Packed[] | undefined> {
  const to = r.moved.state.to;
  if (!covers(r.run, to)) return undefined;
  const wanted = r.run.revs.filter((rev) => rev > to);
  const found = await Promise.all(wanted.map((seq) => getMessage(t, { stream: t.stream, seq })));
  if (found.some((m) => m === null || m.subject !== r.subject)) return undefined;
  return found.map((m) => packedOf(m!));
}

// Writes `versions` (oldest first) as packs after `moved`, each expecting the one before.
async function publishPacks(
  t: HistoryTarget,
  p: { readonly key: string; readonly versions: readonly Packed[]; readonly moved: Moved },
): Promise<Moved> {
  const subject = t.hsubjectPrefix + p.key;
  let { seq, state } = p.moved;
  const { versions } = p;
  for (let i = 0; i < versions.length;) {
    const batch: Packed[] = [];
    let bytes = 0;
    while (
      i < versions.length && (batch.length === 0 || bytes + size(versions[i]!) <= MAX_PACK_BYTES)
    ) {
      bytes += size(versions[i]!);
      batch.push(versions[i++]!);
    }
    const pack = encodePack(batch, { before: state, headers: t.headers });
    const acked = await publish(t, {
      subject,
      data: pack.data,
      headers: pack.headers,
      expect: { revision: seq },
      d: new Deadline(t.timeout),
    });
    [seq, state] = [acked, pack.state];
  }
  return { seq, state };
}

function size(v: Packed): number {
  return v.entry.length + 1024;
}

/**
 * Empties a deleted key's subject up to its delete marker at `marker` (a create after it stays),
 * once the marker is in the history stream, when that purge is durable: a message older than
 * all of it stays in the stream (the anchor, or the stream's first message).
 */
export async function emptyKey(
  t: HistoryTarget,
  m: { readonly key: string; readonly marker: number; readonly moved?: boolean },
): Promise<void> {
  const { key, marker } = m;
  const subject = t.subjectPrefix + key;
  // The caller's own move put the marker in the history stream, or it is looked up here.
  if (!m.moved && (await movedOf(t, key)).state.to < marker) return;
  if (!(await mayEmpty(t, subject))) return;
  await purge(t, { stream: t.stream, filter: subject, seq: marker + 1, ms: t.timeout });
}

async function mayEmpty(t: HistoryTarget, subject: string): Promise<boolean> {
  // A bucket made by `bucket init` has its anchor first: every key's messages come after it.
  if (t.anchor === 1) return true;
  const [first, info] = await Promise.all([
    getMessage(t, { stream: t.stream, seq: 1, next_by_subj: subject }),
    streamInfo(t, t.stream),
  ]);
  if (first === null) return true;
  if (t.anchor !== undefined && t.anchor < first.seq) return true;
  return info.state.first_seq < first.seq;
}

/**
 * Whether `state` may hold versions the retention lets go as of `now` (the server's time, in
 * milliseconds), without reading a pack: more recorded versions than it keeps, the oldest pack
 * older than `days`.
 */
export function mayPrune(
  state: KeyState,
  o: { readonly retention: HistoryRetention; readonly now: number },
): boolean {
  const { retention: r, now } = o;
  if (state.held >= 0 && state.held <= r.versions) return false;
  if (r.days === 0 || state.oldestAt === undefined) return true;
  return Date.parse(state.oldestAt) < now - r.days * DAY_MS;
}

/**
 * Cuts the packs of `key` the retention no longer keeps (whole packs, oldest first), as of `now`
 * (the server's time), leaving a retention record of the newest version cut. A key deleted more
 * than `days` ago expires whole, leaving the record alone.
 */
export async function prune(
  t: HistoryTarget,
  k: { readonly key: string; readonly now: number },
): Promise<Moved | undefined> {
  const { key, now } = k;
  const subject = t.hsubjectPrefix + key;
  const all = await readSubject(t, { stream: t.hstream, subject, after: 0 });
  const lastMessage = all.at(-1);
  const last = lastMessage === undefined ? undefined : historyMessage(lastMessage.header);
  if (lastMessage === undefined || last === undefined) return undefined;
  const packs: { seq: number; versions: Packed[] }[] = [];
  for (const m of all) {
    const h = historyMessage(m.header);
    if (h?.kind !== "pack") continue;
    try {
      packs.push({ seq: m.seq, versions: decodePack(m.data, h.format) });
    } catch {
      return undefined; // damaged: left for check to report
    }
  }
  const recorded = packs.flatMap((p) => p.versions.filter((v) => v.record !== undefined));
  const n = cutCount(t.retention, {
    ats: recorded.map((v) => Date.parse(v.at)),
    deleted: last.state.tip?.op === "delete",
    now,
  });
  // Whole packs whose recorded versions are all among the first `n`.
  let keep = 0;
  let gone = 0;
  for (; keep < packs.length; keep++) {
    const count = packs[keep]!.versions.filter((v) => v.record !== undefined).length;
    if (gone + count > n) break;
    gone += count;
  }
  const cutVersion = packs.slice(0, keep).flatMap((p) => p.versions)
    .findLast((v) => v.record !== undefined);
  if (keep === 0 || cutVersion === undefined) return undefined;
  const cut: CutRecord = {
    rev: cutVersion.rev,
    seq: cutVersion.record!.seq ?? 0,
    hash: cutVersion.record!.hash,
  };
  const whole = keep === packs.length && last.state.tip?.op === "delete";
  const record = encodeCut(cut, {
    before: last.state,
    whole,
    left: {
      held: recorded.length - gone,
      packs: packs.length - keep,
      oldestAt: packs[keep]?.versions.at(-1)?.at,
    },
    headers: t.headers,
  });
  let ack: { seq: number };
  try {
    ack = await t.js.publish(subject, undefined, {
      headers: record.headers,
      expect: { lastSubjectSequence: lastMessage.seq },
    });
  } catch (e) {
    if (isWrongLastSequence(e)) return undefined; // a mover wrote meanwhile: the next prune cuts
    throw e;
  }
  await t.jsm.streams.purge(t.hstream, { filter: subject, seq: packs[keep]?.seq ?? ack.seq });
  return { seq: ack.seq, state: record.state };
}
