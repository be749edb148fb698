// The jetstream backend's writes: conditional publishes of entries and delete markers, and the
// purge that removes a marker once it is old. A publish goes through the connection's reply
// subscription (replies.ts), whose answer is read here as the client reads it: an acknowledgement,
// a JetStream API error, "no responders", or no answer in time (an outcome the caller cannot
// know). Only a publish that could not be sent that way at all goes through the client's own.

import type { Msg, MsgHdrs, NatsConnection } from "@nats-io/nats-core";
import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import {
  AnswerLostError,
  apiCode,
  BucketGoneError,
  checkRevision,
  type Deadline,
  isNoResponders,
  NoRespondersError,
  RefusedError,
  STREAM_NOT_FOUND,
  TimeoutError,
} from "./errors.ts";
import { type Answer, repliesOf } from "./replies.ts";
import { KV_OPERATION } from "./wire.ts";

const DECODER = new TextDecoder();
const EMPTY = new Uint8Array(0);
const EXPECTED_LAST_SUBJECT_SEQUENCE = "Nats-Expected-Last-Subject-Sequence";
const EXPECTED_LAST_SEQUENCE = "Nats-Expected-Last-Sequence";

/** Where writes go: one bucket's stream. */
export interface WriteTarget {
  readonly stream: string;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  /**
   * `headers()` from `@nats-io/nats-core`, handed over by the opener, which loads the NATS
   * modules only when a jetstream store is opened: a static import here would load them for
   * every user of mod.ts, file-only ones included.
   */
  readonly headers: () => MsgHdrs;
}

/** What a write expects to find. */
export interface Expect {
  /** The key's latest revision (0: it holds nothing). Omitted: write unconditionally. */
  readonly revision?: number | undefined;
  /** The stream's last sequence (see `capacity.ts`). */
  readonly streamSeq?: number | undefined;
}

/** One write: where, what, what it expects, its headers, and its call's deadline. */
export interface Publish {
  readonly subject: string;
  /** The entry (none for a delete marker). */
  readonly data?: Uint8Array | undefined;
  readonly expect: Expect;
  /** The version's headers (history on), a rollup (history off), or none. */
  readonly headers: MsgHdrs | undefined;
  readonly d: Deadline;
}

/** A write not sent because its call had already ended (its caller was told it failed). */
export class CallEndedError extends Error {
  override readonly name = "CallEndedError";
}

/**
 * Publishes `p.data` to `p.subject` if the expectations hold; resolves to the new revision. A
 * publish nothing answers is checked against the bucket, so a deleted bucket is named as such.
 */
export async function publish(t: WriteTarget, p: Publish): Promise<number> {
  // A call that timed out or was aborted sends no write after its caller was answered.
  if (p.d.cancelled) throw new CallEndedError("the call ended before this write was sent");
  const { revision, streamSeq } = p.expect;
  let headers = p.headers;
  if (revision !== undefined || streamSeq !== undefined) {
    headers ??= t.headers();
    if (revision !== undefined) headers.set(EXPECTED_LAST_SUBJECT_SEQUENCE, String(revision));
    if (streamSeq !== undefined) headers.set(EXPECTED_LAST_SEQUENCE, String(streamSeq));
  }
  const ms = p.d.left();
  return await acked(t, () =>
    repliesOf(t.nc).send(
      { subject: p.subject, payload: p.data ?? EMPTY, headers, ms },
      answerIn(ms),
    ) ??
      // Not sent that way (the subscription is closed or refused): the client says what is wrong.
      t.js.publish(p.subject, p.data, {
        ...(headers === undefined ? {} : { headers }),
        timeout: ms,
      })
        .then((a) => a.seq));
}

// A publish's answer, read as the client reads one: the acknowledged sequence, or why none.
function answerIn(ms: number): Answer<number> {
  return {
    read: (m) => {
      const ack = apiAnswer<{ stream?: unknown; seq?: unknown }>(m);
      if (typeof ack.stream !== "string" || ack.stream === "" || typeof ack.seq !== "number") {
        throw new RefusedError({ description: "invalid acknowledgement" });
      }
      return ack.seq;
    },
    lost: lostIn(ms),
  };
}

// What a request with no answer throws, in the client's words.
function lostIn(ms: number): Answer<never>["lost"] {
  return (l) => {
    if (l.why === "refused") throw l.error;
    if (l.why === "timeout") throw new TimeoutError(`no answer within ${ms} ms`);
    throw new AnswerLostError("the reply subscription closed before the answer came");
  };
}

// An API answer's JSON, or what it says is wrong ("no responders", an API error, no JSON).
function apiAnswer<T>(m: Msg): T {
  const code = m.headers?.code ?? 0;
  if (code === 503) throw new NoRespondersError("no responders for the request's subject");
  let v: (T & { error?: { err_code?: unknown } | null }) | undefined;
  try {
    v = code === 0 ? JSON.parse(DECODER.decode(m.data)) : undefined;
  } catch {
    // Not JSON: said below.
  }
  if (v === undefined || v === null || typeof v !== "object") {
    throw new RefusedError({ description: `no answer the API gives (status ${code})` });
  }
  if (v.error !== undefined && v.error !== null) throw new RefusedError(v.error);
  return v;
}

/**
 * Removes from `stream` the messages of `filter` below `seq` (all of them without it), as the
 * client's `streams.purge` does, through the connection's reply subscription.
 */
export async function purge(
  t: Pick<WriteTarget, "nc" | "jsm">,
  p: {
    readonly stream: string;
    readonly filter: string;
    readonly seq?: number;
    readonly ms: number;
  },
): Promise<void> {
  const { stream, filter, seq, ms } = p;
  const body = JSON.stringify(seq === undefined ? { filter } : { filter, seq });
  const sent = repliesOf(t.nc).send({
    subject: `$JS.API.STREAM.PURGE.${stream}`,
    payload: body,
    ms,
  }, {
    read: (m) => {
      if (apiAnswer<{ success?: unknown }>(m).success !== true) {
        throw new RefusedError({ description: "the purge did not succeed" });
      }
    },
    lost: lostIn(ms),
  });
  await (sent ?? t.jsm.streams.purge(stream, seq === undefined ? { filter } : { filter, seq }));
}

/**
 * Writes a delete marker for `p.subject` if its latest revision is still `p.expect.revision`;
 * resolves to the marker's sequence. Only the deleter whose expectation holds writes it.
 */
export function publishDelete(t: WriteTarget, p: Omit<Publish, "data">): Promise<number> {
  const h = p.headers ?? t.headers();
  h.set(KV_OPERATION, "DEL");
  return publish(t, { ...p, data: undefined, headers: h });
}

// The revision a publish was acknowledged at; a publish nothing answers is checked against the
// bucket, so a deleted bucket is named as such.
async function acked(t: WriteTarget, send: () => Promise<number>): Promise<number> {
  try {
    return checkRevision(await send());
  } catch (e) {
    if (isNoResponders(e)) await checkBucketExists(t, e);
    throw e;
  }
}

/**
 * Removes `subject`'s messages up to and including the delete marker at `markerSeq`, so deleted
 * keys leave nothing behind. A write made after the marker (a concurrent re-create) has a higher
 * sequence and stays.
 */
export async function purgeMarker(
  t: WriteTarget & { readonly timeout: number },
  m: { readonly subject: string; readonly seq: number },
): Promise<void> {
  await purge(t, { stream: t.stream, filter: m.subject, seq: m.seq + 1, ms: t.timeout });
}

// After a publish nobody answered: when the bucket's stream is gone, says so by name; otherwise
// lets the original failure stand.
async function checkBucketExists(t: WriteTarget, original: unknown): Promise<void> {
  let missing = false;
  try {
    await t.jsm.streams.info(t.stream);
  } catch (e) {
    missing = apiCode(e) === STREAM_NOT_FOUND;
  }
  if (missing) throw new BucketGoneError("the bucket is gone", { cause: original });
}
