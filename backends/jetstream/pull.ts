// Draining an ephemeral consumer for a scan: pulls that ask for many messages and answer at once
// with what is there, and an end that holds on nats-server 2.9 and 2.10 alike while others write,
// delete and purge (docs/design/jetstream.md, "Scans", says what the servers do and why).

import type { Msg, MsgHdrs, NatsConnection } from "@nats-io/nats-core";
import type { JetStreamManager } from "@nats-io/jetstream";
import { UnavailableError } from "../../store/errors.ts";
import { type Deadline, PREFIX } from "./errors.ts";
import { randomHex } from "../../store/random.ts";

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
// How long a pull that waits may wait, when it confirms that a drain that came up short is done.
const CONFIRM_MS = 150;
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

/** What a drain reads from, and what it knows of the consumer. */
export interface Drain {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly stream: string;
  /** The consumer's name. */
  readonly name: string;
  /** How many messages the consumer had when it was made. */
  readonly initial: number;
  /** The stream sequence the consumer said it had delivered up to when it was made. */
  readonly start: number;
  /** The stream's last sequence, read just after the consumer was made. */
  readonly through: Promise<number>;
  readonly d: Deadline;
  /**
   * Whether the server may move the consumer past messages it has not delivered when any
   * subject of the stream is purged (nats-server 2.9 does; 2.10 does not): then a drain that
   * comes up short confirms with a pull that waits.
   */
  readonly purgesSkip: boolean;
}

/**
 * Delivers the messages of consumer `t.name` to `onMessage`, in the order the server sends them,
 * until it has delivered the `initial` messages it had when it was made (or, when some vanished,
 * it is past `through` with nothing more to give), or the deadline is cancelled.
 *
 * @returns `"complete"` when the drain saw everything, `"cut"` when the deadline cut it short,
 * `"moved"` when a purge moved the consumer (read again with a new one).
 */
export async function drain(
  t: Drain,
  onMessage: (m: Pulled) => void,
): Promise<"complete" | "cut" | "moved"> {
  const { name, initial, through, d } = t;
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
  // Whether this pull waits, to confirm that a drain that came up short is done. A consumer seen
  // moved by a purge (a pull that waited brought what one that did not said was not there, or
  // its first message is below where it said it started) says nothing true of its end: the
  // drain gives up on it, and the caller reads again with a new one.
  let confirming = false;
  try {
    while (!d.cancelled) {
      const batch = received === 0
        ? Math.min(Math.max(initial, 1), MIN_BATCH * 4)
        : Math.max(MIN_BATCH, Math.min(MAX_BATCH, Math.floor(PULL_BYTES / (bytes / received))));
      const expires = Math.max(1, confirming ? Math.min(CONFIRM_MS, d.left()) : d.left()) * 1e6;
      const pull = confirming ? { batch, expires } : { batch, no_wait: true, expires };
      t.nc.publish(next, ENCODER.encode(JSON.stringify(pull)), { reply: inbox });
      const waited = confirming;
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
        if (r.done) return "cut";
        const m = r.value;
        const info = m.reply === undefined ? undefined : ackInfo(m.reply);
        if (info !== undefined) {
          if (received === 0 && t.purgesSkip && info.seq <= t.start) return "moved";
          received++;
          bytes += m.data.length + (m.headers === undefined ? 0 : 64) + m.subject.length;
          onMessage({ subject: m.subject, ...info, headers: m.headers, data: m.data });
          if (received >= initial) return d.cancelled ? "cut" : "complete";
          if (++got === batch) end = "full";
          continue;
        }
        end = status(m);
      }
      if (got > 0 && waited) return "moved";
      if (end === "retry") {
        await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MS, d.left())));
      } else if (end === "short" && got === 0) {
        // Nothing came. When the consumer is past the end and everything it sent has arrived, the
        // messages still missing vanished (on 2.9, once a pull that waits confirms it: a purge
        // elsewhere moves the consumer's position, not what it still has to deliver); otherwise
        // pull again.
        const [ci, end] = await Promise.all([t.jsm.consumers.info(t.stream, name), through]);
        if (ci.delivered.stream_seq >= end && received >= ci.delivered.consumer_seq) {
          if (!t.purgesSkip || waited) return d.cancelled ? "cut" : "complete";
          confirming = true;
        }
      }
    }
    return "cut";
  } finally {
    sub.unsubscribe();
  }
}

// A fresh inbox under the connection's inbox prefix (`_INBOX` unless the host set another, which
// its permissions may require). Made here, not by the NATS client, whose modules this file does
// not load (see write.ts).
export function inboxOf(nc: NatsConnection): string {
  const prefix = (nc as { options?: { inboxPrefix?: unknown } }).options?.inboxPrefix;
  return `${typeof prefix === "string" && prefix !== "" ? prefix : "_INBOX"}.${randomHex(11)}`;
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
