// Draining an ephemeral consumer for a scan: pulls that ask for many messages and answer at once
// with what is there, and an end that holds on nats-server 2.9 and 2.10 alike while others write,
// delete and purge.
//
// Why not the NATS client's fetch(): a fetch waits its whole expiry (at least one second) for a
// batch it cannot fill, and the client only stops early by counting on the consumer's pending
// count, which churn makes wrong both ways (keys went missing from 2 of 200 listings under a
// writer; other listings waited 1 to 5 s for messages that never came; issue 22).
//
// What the servers do, measured, and what this file does about it:
//
// - A last-per-subject consumer first delivers, in order, the last message of every subject it
//   found when it was made: `initial` of them. A message that vanished meanwhile (overwritten,
//   or purged) is replaced on 2.9 by the next message the filter matches (so the count holds) and
//   skipped on 2.10. After them come messages written later. So `initial` messages received means
//   the first part is done.
// - On 2.9, a purge that empties a subject the consumer's filter covers moves the consumer's
//   position to the end of the stream while it still has messages to deliver (stream.go: a
//   filtered purge hands consumers the subject's first sequence, 0 when it is empty, meaning
//   "everything"): its position alone cannot say it is done. A pull that brings nothing while the
//   consumer is past the stream's last sequence, and every message it counts as sent has arrived
//   (it counts a message sent when it queues it), can.
// - On 2.9, a pull that ends while the consumer holds the next message (its byte limit reached,
//   or expired) loses that message for good. So pulls ask for a number of messages sized to the
//   messages seen so far, never for bytes, and expire only with the call's deadline; a pull with
//   `no_wait` answers at the end of the stream at once. A pull that brings nothing for
//   `IDLE_MS` is followed by a look at the consumer and another pull.

import type { Msg, MsgHdrs, NatsConnection } from "@nats-io/nats-core";
import type { JetStreamManager } from "@nats-io/jetstream";
import { UnavailableError } from "../../store/errors.ts";
import { type Deadline, PREFIX } from "./errors.ts";

// How many messages one pull asks for: enough for a few round trips per listing of small entries,
// sized so that about `PULL_BYTES` come at once.
const MIN_BATCH = 64;
const MAX_BATCH = 10_000;
const PULL_BYTES = 4 * 1024 * 1024;
// How long a pull may bring nothing, not even a status, before the scan looks at the consumer and
// pulls again.
const IDLE_MS = 200;
// How long to wait before pulling again from a consumer that is not ready yet (a cluster).
const RETRY_MS = 50;
const ENCODER = new TextEncoder();

/** One message a pull delivered. */
export interface Pulled {
  readonly subject: string;
  /** The stream sequence. */
  readonly seq: number;
  /** The server's timestamp, in nanoseconds since the epoch (decimal; see `nanosOf`). */
  readonly nanos: string;
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
 * until it has delivered the `initial` messages it had when it was made (or, when some vanished,
 * it is past `through`, the stream's last sequence read after it was made, with nothing more to
 * give), or the deadline is cancelled.
 *
 * @returns `true` when the drain saw everything, `false` when the deadline cut it short.
 */
export async function drain(
  t: DrainTarget,
  name: string,
  initial: number,
  through: Promise<number>,
  d: Deadline,
  onMessage: (m: Pulled) => void,
): Promise<boolean> {
  through.catch(() => {});
  const inbox = inboxOf(t.nc);
  const sub = t.nc.subscribe(inbox);
  const messages = sub[Symbol.asyncIterator]();
  d.onCancel(() => sub.unsubscribe());
  const next = `$JS.API.CONSUMER.MSG.NEXT.${t.stream}.${name}`;
  // The iterator's next message, kept across pulls when a pull goes idle: it is still coming.
  let coming: Promise<IteratorResult<Msg>> | undefined;
  let received = 0;
  let bytes = 0;
  try {
    while (!d.cancelled) {
      const batch = received === 0
        ? Math.min(Math.max(initial, 1), MIN_BATCH * 4)
        : Math.max(MIN_BATCH, Math.min(MAX_BATCH, Math.floor(PULL_BYTES / (bytes / received))));
      const expires = Math.max(1, d.left()) * 1e6;
      t.nc.publish(next, ENCODER.encode(JSON.stringify({ batch, no_wait: true, expires })), {
        reply: inbox,
      });
      let got = 0;
      let end: "full" | "short" | "retry" | undefined;
      while (end === undefined) {
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
          bytes += m.data.length + (m.headers === undefined ? 0 : 64) + m.subject.length;
          onMessage({ subject: m.subject, ...info, headers: m.headers, data: m.data });
          if (received >= initial) return !d.cancelled;
          if (++got === batch) end = "full";
          continue;
        }
        end = status(m);
      }
      if (end === "retry") {
        await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MS, d.left())));
      } else if (end === "short" && got === 0) {
        // Nothing came. When the consumer is past the end and everything it sent has arrived, the
        // messages still missing vanished; otherwise pull again.
        const [ci, last] = await Promise.all([t.jsm.consumers.info(t.stream, name), through]);
        if (ci.delivered.stream_seq >= last && received >= ci.delivered.consumer_seq) {
          return !d.cancelled;
        }
      }
    }
    return false;
  } finally {
    sub.unsubscribe();
  }
}

// A fresh inbox under the connection's inbox prefix (`_INBOX` unless the host set another, which
// its permissions may require). Made here, not by the NATS client, whose modules this file does
// not load (see write.ts).
function inboxOf(nc: NatsConnection): string {
  const prefix = (nc as { options?: { inboxPrefix?: unknown } }).options?.inboxPrefix;
  const token = Array.from(
    crypto.getRandomValues(new Uint8Array(11)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  return `${typeof prefix === "string" && prefix !== "" ? prefix : "_INBOX"}.${token}`;
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
export function ackInfo(reply: string): { seq: number; nanos: string } | undefined {
  if (!reply.startsWith("$JS.ACK.")) return undefined;
  const tokens = reply.split(".");
  const at = tokens.length === 9 ? 2 : tokens.length >= 11 ? 4 : -1;
  if (at < 0) return undefined;
  const seq = Number(tokens[at + 3]);
  const nanos = tokens[at + 5] ?? "";
  if (!Number.isSafeInteger(seq) || !/^[0-9]{1,20}$/.test(nanos)) return undefined;
  return { seq, nanos };
}

/** A delivered message's timestamp in nanoseconds. */
export function nanosOf(m: Pick<Pulled, "nanos">): bigint {
  return BigInt(m.nanos);
}
