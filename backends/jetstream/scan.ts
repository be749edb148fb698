// Listing and counting a jetstream keyspace: one pass over the stream's last message per
// subject, never a request per key.

import type { MsgHdrs, NatsConnection } from "@nats-io/nats-core";
import type { ConsumerInfo, JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import { CorruptError, UnavailableError } from "../../store/errors.ts";
import { MAX_ENTRIES } from "../../store/limits.ts";
import { decodeUtf8, MAX_HEADER_BYTES, parseHeader } from "../../store/serialize.ts";
import { validateKey } from "../../store/validate.ts";
import type { Bound } from "./capacity.ts";
import { type Deadline, PREFIX } from "./errors.ts";
import { drain, nanosOf, type Pulled } from "./pull.ts";
import { ANCHOR_NAME, KV_OPERATION } from "./wire.ts";
import { streamInfo } from "./direct.ts";

// The server removes a listing's consumer after this long without pulls if the delete that
// normally follows a listing is lost (the connection dropped, say).
const MIN_CONSUMER_IDLE_MS = 30_000;
const CLOSE = [0x0a, 0x2d, 0x2d, 0x2d, 0x0a]; // "\n---\n"
// How many times a scan makes its consumer again when purges moved it as it was made.
const MAX_CONSUMER_ATTEMPTS = 8;
// How many reads in a row that cannot tell whether their consumer forgot are made before one is
// taken as it is (see `forgot`).
const MAX_UNSURE_READS = 3;

/** What a scan reads from: one bucket's stream, under one prefix. */
export interface Keyspace {
  readonly bucket: string;
  readonly stream: string;
  readonly timeout: number;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  /** What precedes a key in a message subject (`$KV.<bucket>.<prefix>.`). */
  readonly subjectPrefix: string;
  /** The stream's creation time when the store opened: the bucket instance it bound. */
  readonly created: string;
  /** The clock delete markers are aged by, in milliseconds (`Date.now` when absent). */
  readonly now?: (() => number) | undefined;
  /** Whether a purge may move a consumer past what it has not delivered (see `pull.ts`). */
  readonly purgesSkip: boolean;
}

/**
 * When a delete marker may be purged. A delete leaves its marker: a purge right after the delete
 * is not durable across a server crash on nats-server 2.9 and 2.10 (the deleted value came back
 * after a SIGKILL and restart in 9 of 10 trials, nemesis seed 2910), while a marker, the key's
 * latest message, keeps the key deleted. Markers older than this are purged by the next listing
 * or count that meets them (the NATS KV client's own `purgeDeletes` waits 30 minutes too), so
 * churn never piles them up. Tests age markers through the store's clock (`JetStreamDeps.now`).
 */
export const MARKERS: { readonly purgeAfterMs: number; readonly perCall: number } = {
  purgeAfterMs: 30 * 60_000,
  perCall: 256,
};

/** An old delete marker: its subject and sequence. */
export interface OldMarker {
  readonly subject: string;
  readonly seq: number;
}

/** A key's latest message: a live entry's bytes (empty for a headers-only scan) and revision. */
export interface Scanned {
  readonly revision: number;
  readonly value: Uint8Array;
  /** The message's headers (a version's record, with history on). */
  readonly headers: MsgHdrs | undefined;
  /** The server's timestamp, in nanoseconds. */
  readonly ns: bigint;
}

/** How a scan reads, within its call's deadline. */
export interface ScanOptions {
  readonly d: Deadline;
  /** Deliver headers only (a count needs no values). */
  readonly headersOnly?: boolean;
  /** Keep the latest live value of subjects that are not legal keys too (an operator's audit). */
  readonly illegal?: boolean;
  /**
   * Read nothing when the keyspace's subjects (live keys and delete markers) number what this
   * accepts (a count that only needs to know the store is not full).
   */
  readonly enough?: ((subjects: number) => boolean) | undefined;
}

/** A delete marker a scan met: its key and sequence. */
export interface Marker extends OldMarker {
  readonly key: string;
}

/** What a scan saw. */
export interface ScanResult {
  /** The latest live message of every legal key. */
  readonly latest: Map<string, Scanned>;
  /** With `illegal`: the latest live value under each name that is not a legal key. */
  readonly illegal: Map<string, Uint8Array>;
  /**
   * Whether the pass saw every message it expected (a pass cut short by the deadline, or whose
   * messages vanished while it ran, is incomplete).
   */
  readonly complete: boolean;
  /** Delete markers old enough to purge. */
  readonly oldMarkers: OldMarker[];
  /** Every delete marker of a legal key it met (at most `MARKERS.perCall`). */
  readonly markers: Marker[];
  /** The stream's last sequence just after the scan's consumer was made (when it was read). */
  readonly through?: number | undefined;
  /** The keyspace's subjects when the scan began; with `enough` accepting it, nothing was read. */
  readonly subjects: number;
  readonly read: boolean;
}

/** What `readAll` delivers from: a stream, and how to make and drain a consumer on it. */
export interface Source {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly timeout: number;
  readonly purgesSkip: boolean;
}

/** What `readAll` reads: a stream's messages under a filter, how, and within which deadline. */
export interface ReadAll {
  readonly stream: string;
  readonly filter: string;
  readonly d: Deadline;
  /** The last message of each subject (else every message). */
  readonly lastPerSubject: boolean;
  readonly headersOnly: boolean;
  /** Answer without waiting for the consumer's delete (it expires by itself if lost). */
  readonly leave?: boolean;
  /** Read nothing when the consumer starts with a number of messages this accepts. */
  readonly enough?: ((initial: number) => boolean) | undefined;
  /** Given every message, in the order the server sends them. */
  readonly onMessage: (m: Pulled) => void;
}

/**
 * Every message of `stream` under `filter` an ephemeral consumer delivers (`last_per_subject`, or
 * every message), in the order the server sends them, until the consumer has looked past the
 * stream's last sequence as it was once the consumer existed (see `pull.ts`).
 *
 * @returns Whether it saw everything, and that last sequence (`undefined` for no messages).
 */
export async function readAll(
  src: Source,
  options: ReadAll,
): Promise<{ complete: boolean; through: number | undefined; initial: number; read: boolean }> {
  const { timeout } = src;
  const { filter, d } = options;
  const config = {
    ack_policy: "none",
    deliver_policy: options.lastPerSubject ? "last_per_subject" : "all",
    filter_subject: filter,
    headers_only: options.headersOnly,
    mem_storage: true,
    num_replicas: 1,
    inactive_threshold: Math.max(MIN_CONSUMER_IDLE_MS, 2 * timeout) * 1e6,
  } as const;
  let unsure = 0;
  for (let attempt = 1;; attempt++) {
    // Messages of a read given up on are dropped: each read is one moment of the stream.
    const got: Pulled[] = [];
    const r = await readOnce(src, { ...options, config, onMessage: (m) => got.push(m) });
    // A read that may have forgotten what it found is made again, and taken as it is once reads
    // in a row were unsure (when every key was written while each read was made, say).
    if (r !== "moved" && (r.doubt === undefined || ++unsure >= MAX_UNSURE_READS)) {
      for (const m of got) options.onMessage(m);
      return r.read;
    }
    // On nats-server 2.9 a purge of any subject while a consumer is made or read can move it past
    // what it has to deliver: read again with a new one.
    if (attempt >= MAX_CONSUMER_ATTEMPTS || d.cancelled) {
      throw new UnavailableError(
        `${PREFIX} Cannot read the bucket: concurrent purges kept moving the scan's consumer; try again`,
      );
    }
  }
}

interface Read {
  complete: boolean;
  through: number | undefined;
  initial: number;
  read: boolean;
}

// One read through one consumer: "moved" when a purge moved the consumer, with `doubt` when it
// may have.
async function readOnce(
  src: Source,
  options: ReadAll & { readonly config: Parameters<JetStreamManager["consumers"]["add"]>[1] },
): Promise<{ read: Read; doubt?: "unsure" } | "moved"> {
  const { jsm } = src;
  const { stream, filter, d } = options;
  // On 2.9 a purge while the consumer is made can make it forget the last message of every
  // subject it found, not only move it (see `forgot`): the stream's last sequence before it was
  // made tells what it must deliver first.
  const before = src.purgesSkip ? (await streamInfo(src, stream)).state.last_seq : undefined;
  const ci: ConsumerInfo = await jsm.consumers.add(stream, options.config);
  if (src.purgesSkip && ci.num_pending === 0) {
    // Saying it has nothing to deliver of a filter that matches a message, it was moved.
    const any = await jsm.streams.getMessage(stream, { seq: 1, next_by_subj: filter } as never);
    if (any !== null) {
      jsm.consumers.delete(stream, ci.name).catch(() => {});
      return "moved";
    }
  }
  let complete = true;
  let through: number | undefined;
  // What a consumer says it holds is trusted to spare a read only where purges cannot skew it.
  const enough = !src.purgesSkip && (options.enough?.(ci.num_pending) ?? false);
  const read = ci.num_pending > 0 && !enough;
  // The sequence of the first message it delivered.
  let first: number | undefined;
  try {
    if (read) {
      const last = jsm.streams.info(stream).then((si) => (through = si.state.last_seq));
      const ended = await drain({
        nc: src.nc,
        jsm,
        stream,
        name: ci.name,
        initial: ci.num_pending,
        start: ci.delivered.stream_seq,
        through: last,
        d,
        purgesSkip: src.purgesSkip,
      }, (m) => {
        first ??= m.seq;
        options.onMessage(m);
      });
      if (ended === "moved") return "moved";
      complete = ended === "complete";
    }
  } finally {
    // Best effort: a consumer whose delete is lost expires on the server by itself.
    const deleted = jsm.consumers.delete(stream, ci.name).catch(() => {});
    if (!options.leave) await deleted;
  }
  const r = { complete: complete && !d.cancelled, through, initial: ci.num_pending, read };
  if (read && !d.cancelled && before !== undefined && (first === undefined || first > before)) {
    const f = await forgot(src, { stream, filter, before });
    if (f === "yes") return "moved";
    if (f === "unsure") return { read: r, doubt: "unsure" };
  }
  return { read: r };
}

/**
 * Whether a last-per-subject consumer made after the stream's last sequence was `before`, whose
 * first message came after it (or which delivered nothing), forgot what it found. On
 * nats-server 2.9 a purge that empties a subject between the consumer's registration and its
 * start (consumer.go, `setLeader`) moves it past the last sequence it found and drops its list of
 * each subject's last message: it then delivers only what is written later, with a pending count
 * and a position that look right (1 listing of 600 keys in 250 to 800 came back empty under the
 * churn of tests/jetstream/churn_test.ts). A consumer that did not forget delivers first the
 * oldest of those last messages, so a subject whose last message is at or below `before` proves
 * it forgot. The oldest message under the filter names the subject looked at; when that subject
 * was written since, the answer is "unsure".
 */
async function forgot(
  src: Source,
  o: { readonly stream: string; readonly filter: string; readonly before: number },
): Promise<"yes" | "no" | "unsure"> {
  const { jsm } = src;
  const { stream, filter, before } = o;
  const oldest = await jsm.streams.getMessage(stream, { seq: 1, next_by_subj: filter } as never);
  if (oldest === null || oldest.seq > before) return "no";
  const last = await jsm.streams.getMessage(stream, { last_by_subj: oldest.subject });
  return last !== null && last.seq <= before ? "yes" : "unsure";
}

/** Whether a message is a delete marker (or a purge's, or the server's). */
export function isMarkerMessage(headers: Pick<MsgHdrs, "get" | "has"> | undefined): boolean {
  const op = headers?.get(KV_OPERATION);
  return op === "DEL" || op === "PURGE" || (headers?.has("Nats-Marker-Reason") ?? false);
}

/**
 * The latest live message of every key under the prefix, in one pass over the stream: an
 * ephemeral consumer delivering the last message per subject, drained (see `pull.ts`), deleted
 * after. Delete markers are left out, and so are subjects that are not legal keys unless asked for.
 * A message older than one already seen for its subject (which a consumer can deliver while others
 * write) changes nothing.
 */
export async function scan(ks: Keyspace, options: ScanOptions): Promise<ScanResult> {
  // Per subject, the newest message seen.
  const newest = new Map<string, Pulled>();
  const { complete, through, initial, read } = await readAll(ks, {
    stream: ks.stream,
    filter: `${ks.subjectPrefix}>`,
    d: options.d,
    lastPerSubject: true,
    headersOnly: options.headersOnly ?? false,
    enough: options.enough,
    onMessage: (m) => {
      const seen = newest.get(m.subject);
      if (seen === undefined || seen.seq < m.seq) newest.set(m.subject, m);
    },
  });
  const latest = new Map<string, Scanned>();
  const illegal = new Map<string, Uint8Array>();
  const oldMarkers: OldMarker[] = [];
  const markers: Marker[] = [];
  const oldBefore = BigInt((ks.now ?? Date.now)() - MARKERS.purgeAfterMs) * 1_000_000n;
  for (const [subject, m] of newest) {
    const marker = isMarkerMessage(m.headers);
    const key = keyOf(ks.subjectPrefix, subject);
    if (key === undefined) {
      if (options.illegal && !marker && subject.startsWith(ks.subjectPrefix)) {
        const name = subject.slice(ks.subjectPrefix.length);
        if (!isReservedName(ks.subjectPrefix, name)) illegal.set(name, m.data);
      }
    } else if (!marker) {
      latest.set(key, { revision: m.seq, value: m.data, headers: m.headers, ns: nanosOf(m) });
    } else {
      if (markers.length < MARKERS.perCall) markers.push({ key, subject, seq: m.seq });
      if (oldMarkers.length < MARKERS.perCall && nanosOf(m) <= oldBefore) {
        oldMarkers.push({ subject, seq: m.seq });
      }
    }
  }
  return { latest, illegal, complete, oldMarkers, markers, through, subjects: initial, read };
}

/**
 * Counts the live keys under the prefix, for the capacity check: a bound at the stream sequence
 * read before the count (see `capacity.ts`), and the stream's creation time, which
 * tells the caller whether the bucket is still the instance its earlier bounds came from. The
 * stream's subject total comes first, in a small reply: it bounds the prefix's keys, and below
 * the limit that is enough. Otherwise the prefix's own subjects are counted; they include delete
 * markers, so only a count at the limit is made exact by a headers-only scan, and only a scan that
 * completed is trusted.
 */
export async function count(
  ks: Keyspace,
  o: { readonly d: Deadline; readonly prior?: { bound: Bound | undefined; created: string } },
): Promise<Bound & { created: string; oldMarkers: OldMarker[] }> {
  const { d, prior } = o;
  const info = await streamInfo(ks, ks.stream);
  const { created } = info;
  const seq = info.state.last_seq;
  const messages = info.state.messages;
  const before = prior?.created === created ? prior.bound : undefined;
  // An exact count at this sequence, and nothing written or removed since: still exact. A full
  // store refuses a create for the price of this one request.
  if (before?.exact === messages && before.seq === seq) {
    return { live: before.live, seq, exact: messages, created, oldMarkers: [] };
  }
  // The server leaves the total out when it is 0; a stream with messages and no total counts
  // the slow way.
  const total = info.state.num_subjects ??
    (info.state.messages === 0 ? 0 : Number.POSITIVE_INFINITY);
  if (total < MAX_ENTRIES) return { live: total, seq, created, oldMarkers: [] };
  // Subjects include delete markers, which churn leaves for a while (see MARKERS): a bound from an
  // earlier count of the same stream, moved to this sequence, spares a scan while it allows a key.
  if (before !== undefined && seq >= before.seq) {
    const live = before.live + (seq - before.seq);
    if (live < MAX_ENTRIES) return { live, seq, created, oldMarkers: [] };
  }
  // The keyspace's own subjects, which the scan's consumer counts when it is made (a small reply,
  // where a stream info listing them would name every one): below the limit, that is enough.
  const { latest, complete, oldMarkers, through, subjects, read } = await scan(ks, {
    d,
    headersOnly: true,
    enough: (n) => n < MAX_ENTRIES,
  });
  if (!read) return { live: subjects, seq, created, oldMarkers: [] };
  if (!complete) {
    throw new UnavailableError(
      `${PREFIX} Cannot count memories: the count was cut short, so the store cannot tell whether it is full`,
    );
  }
  // Nothing was written while it counted (or the scan had nothing to read): exact at `seq`.
  const exact = through === undefined || through === seq ? messages : undefined;
  return { live: latest.size, seq, exact, created, oldMarkers };
}

/**
 * The description in a stored entry's header, read from the header's bytes alone, as the file
 * backend lists: an entry whose header parses is listed even when its body is damaged (read()
 * of it reports `CorruptError`). `undefined` when the header does not parse.
 */
export function headerDescription(value: Uint8Array, key: string): string | undefined {
  const end = indexOfClose(value);
  const header = end < 0 ? value.subarray(0, MAX_HEADER_BYTES + 1) : value.subarray(0, end + 5);
  try {
    return parseHeader(decodeUtf8(header, key), key).description;
  } catch (e) {
    if (e instanceof CorruptError) return undefined;
    throw e;
  }
}

// Where the header's closing "\n---\n" starts, within the most a header may take.
function indexOfClose(bytes: Uint8Array): number {
  const limit = Math.min(bytes.length, MAX_HEADER_BYTES + 1);
  for (let i = bytes.indexOf(0x0a, 3); i >= 0 && i + 5 <= limit; i = bytes.indexOf(0x0a, i + 1)) {
    if (
      bytes[i + 1] === CLOSE[1] && bytes[i + 2] === CLOSE[2] && bytes[i + 3] === CLOSE[3] &&
      bytes[i + 4] === CLOSE[4]
    ) return i;
  }
  return -1;
}

// The names this library keeps in a bucket's keyspace for itself (the anchor at the bucket's top).
function isReservedName(subjectPrefix: string, name: string): boolean {
  return name === ANCHOR_NAME && subjectPrefix.split(".").length === 3;
}

// The memory key of a message subject; `undefined` for a name that is not a legal key
// (planted by hand, say), which is invisible.
function keyOf(subjectPrefix: string, subject: string): string | undefined {
  if (!subject.startsWith(subjectPrefix)) return undefined;
  const key = subject.slice(subjectPrefix.length);
  try {
    return validateKey(key);
  } catch {
    return undefined;
  }
}
