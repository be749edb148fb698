// Draining an ephemeral consumer for a scan: pulls that ask for many messages by bytes and answer
// at once with what is there, and an end the server's own bookkeeping decides.
//
// Why not the NATS client's fetch(): a fetch waits its whole expiry (at least one second) for a
// batch it cannot fill, and the client only stops early by counting on the consumer's pending
// count. Under churn that count is wrong both ways: on nats-server 2.9 a last-per-subject consumer
// whose next message vanished (overwritten or purged meanwhile) delivers the following one and
// counts it twice, so pending reaches 0 early and keys go missing from a listing (2 of 200
// listings under a writer); on 2.10 it stays above 0, and pulls wait for messages that never
// come (listings of 1 to 5 s; issue 22). Here a pull asks for up to `BATCH` messages or
// `MAX_BYTES` with `no_wait`, so the server answers as soon as it reaches the end of the stream,
// and the scan ends when the consumer reports it has looked at the stream past the sequence that
// was last when the scan began, and every message it reports sent has arrived (it counts a
// message sent when it queues it: under load a listing that trusted its position alone missed a
// key still on its way).

import { createInbox, type Msg, type MsgHdrs, type NatsConnection } from "@nats-io/nats-core";
import type { JetStreamManager } from "@nats-io/jetstream";
import { UnavailableError } from "../../store/errors.ts";
import { type Deadline, PREFIX } from "./errors.ts";

// Messages and bytes one pull may bring: a few round trips for a full keyspace of small entries,
// at most MAX_BYTES on the wire at once for large ones (above the largest message a bucket takes).
const BATCH = 10_000;
const MAX_BYTES = 4 * 1024 * 1024;
// How long a pull that finds nothing to deliver waits before it answers (nanoseconds). It only
// waits when the consumer's pending count is wrong, so it is short.
const EMPTY_PULL_NS = 20e6;
// How long a pull may bring nothing, not even a status, before the scan asks the consumer where
// it is and pulls again: nats-server 2.9.10 sometimes drops a pull under churn without a word
// (the consumer reports no waiting request, and its messages stay put until the next pull).
const IDLE_MS = 200;
// How long to wait before pulling again from a consumer that is not ready yet (a cluster).
const RETRY_MS = 50;
const ENCODER = new TextEncoder();

/** One message a pull delivered. */
export interface Pulled {
  readonly subject: string;
  /** The stream sequence. */
  readonly seq: number;
  /** The server's timestamp, in milliseconds since the epoch. */
  readonly ms: number;
  /** The same in nanoseconds, exactly. */
  readonly ns: bigint;
  readonly headers: MsgHdrs | undefined;
  readonly data: Uint8Array;
}

/** What a drain reads from. */
export interface DrainTarget {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly stream: string;
}

/**
 * Delivers the messages of consumer `name` to `onMessage`, in the order the server sends them,
 * until the consumer has looked at the stream past `through` (the stream's last sequence read
 * after the consumer was made), or the deadline is cancelled.
 *
 * @returns `true` when the drain saw everything, `false` when the deadline cut it short.
 */
export async function drain(
  t: DrainTarget,
  name: string,
  through: Promise<number>,
  d: Deadline,
  onMessage: (m: Pulled) => void,
): Promise<boolean> {
  through.catch(() => {});
  const inbox = createInbox();
  const sub = t.nc.subscribe(inbox);
  const messages = sub[Symbol.asyncIterator]();
  d.onCancel(() => sub.unsubscribe());
  const request = ENCODER.encode(
    JSON.stringify({ batch: BATCH, max_bytes: MAX_BYTES, no_wait: true, expires: EMPTY_PULL_NS }),
  );
  const next = `$JS.API.CONSUMER.MSG.NEXT.${t.stream}.${name}`;
  // The iterator's next message, kept across pulls when a pull goes idle: it is still coming.
  let coming: Promise<IteratorResult<Msg>> | undefined;
  // Messages received, and (once the consumer is past the end) how many it has sent: the server
  // counts a message sent when it queues it, so some may still be on their way.
  let received = 0;
  let sent: number | undefined;
  try {
    while (!d.cancelled) {
      if (sent === undefined) t.nc.publish(next, request, { reply: inbox });
      let got = 0;
      let end: "full" | "short" | "retry" | undefined;
      while (end === undefined) {
        if (sent !== undefined && received >= sent) return !d.cancelled;
        coming ??= messages.next();
        const r = await idle(coming, IDLE_MS);
        if (r === "idle") {
          end = "short";
          continue;
        }
        coming = undefined;
        if (r.done) return false;
        const m = r.value;
        const info = m.reply === undefined ? undefined : ackInfo(m.reply);
        if (info !== undefined) {
          received++;
          onMessage({ subject: m.subject, ...info, headers: m.headers, data: m.data });
          if (++got === BATCH) end = "full";
          continue;
        }
        end = status(m);
        // Once past the end, only the messages still on their way count.
        if (sent !== undefined && end !== undefined) end = undefined;
      }
      if (end === "retry") {
        await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MS, d.left())));
      } else if (end === "short" && sent === undefined) {
        // The server stopped short: at the end of the stream, at the byte limit, because the
        // pending count it went by was wrong, or it dropped the pull. Only the consumer's position
        // says which.
        const [ci, last] = await Promise.all([t.jsm.consumers.info(t.stream, name), through]);
        if (ci.delivered.stream_seq >= last) sent = ci.delivered.consumer_seq;
      }
    }
    return false;
  } finally {
    sub.unsubscribe();
  }
}

// The next message, or "idle" when none comes within `ms`.
async function idle<T>(next: Promise<T>, ms: number): Promise<T | "idle"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      next,
      new Promise<"idle">((resolve) => (timer = setTimeout(() => resolve("idle"), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

// What a status message means for the pull it ends.
function status(m: Msg): "short" | "retry" | undefined {
  const code = m.headers?.code ?? 0;
  const description = m.headers?.description ?? "";
  // 100: an idle heartbeat or flow control, which these pulls do not ask for.
  if (code === 100) return undefined;
  // 404: nothing to deliver; 408: the end of the stream, or the short wait of an empty pull;
  // 409 at the byte limit: this pull is full.
  if (code === 404 || code === 408 || (code === 409 && /MaxBytes/i.test(description))) {
    return "short";
  }
  // 503: nothing serves the consumer yet (a cluster, just after it was made); 409 on a leader
  // change: pull again.
  if (code === 503 || (code === 409 && /leadership/i.test(description))) return "retry";
  throw new UnavailableError(
    `${PREFIX} The scan's consumer stopped (JetStream status ${code}${
      description ? ` ${description}` : ""
    })`,
  );
}

/**
 * The stream sequence, timestamp and pending count in a delivered message's reply subject:
 * `$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<nanos>.<pending>`, or with a domain and
 * an account hash after `$JS.ACK` (and a random token at the end).
 */
export function ackInfo(reply: string): { seq: number; ms: number; ns: bigint } | undefined {
  if (!reply.startsWith("$JS.ACK.")) return undefined;
  const tokens = reply.split(".");
  const at = tokens.length === 9 ? 2 : tokens.length >= 11 ? 4 : -1;
  if (at < 0) return undefined;
  const seq = Number(tokens[at + 3]);
  const nanos = tokens[at + 5] ?? "";
  if (!Number.isSafeInteger(seq) || !/^[0-9]{1,20}$/.test(nanos)) return undefined;
  const ns = BigInt(nanos);
  return { seq, ms: Number(ns / 1000n) / 1000, ns };
}
