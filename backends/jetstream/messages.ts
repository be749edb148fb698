// Reading one stored message of the bucket's stream or its history stream, with its server time.
// A stream of one replica that allows direct gets is read with one (the cheapest request, answered
// by the only server, after every write it acknowledged, through direct.ts); a replicated one
// through the stream API, which its leader answers, since a replica may answer a direct get from
// behind the leader. A direct get of a stream that is gone gets no answer, so one unanswered within
// `DIRECT_TIMEOUT_MS` (or answered with a status other than "not found") is asked again through
// the stream API, which says what is wrong. A look (`lookMessage`) is a read of a subject's last
// message for a caller that needs its sequence and a few headers: through a direct get it decodes
// only the headers asked for and computes no time.

import type { MsgHdrs } from "@nats-io/nats-core";
import type { JetStreamManager } from "@nats-io/jetstream";
import { ASK_AGAIN, type DirectGets } from "./direct.ts";
import type { HeaderView } from "./header_view.ts";
import { isoOfTimestamp } from "./provenance.ts";

/** One stored message. */
export interface Stored {
  readonly subject: string;
  readonly seq: number;
  readonly header: MsgHdrs | undefined;
  readonly data: Uint8Array;
  /** The server's time it was stored at (ISO 8601 UTC, microseconds). */
  readonly at: string;
}

/** How long a direct get may go unanswered before the stream API is asked instead. */
export const DIRECT_TIMEOUT_MS = 1_000;

/** Where messages are read from, and whether each stream takes direct gets. */
export interface MessageSource {
  readonly jsm: JetStreamManager;
  /** Stream names that take direct gets (one replica, `allow_direct`), and what makes them. */
  readonly direct: {
    readonly streams: ReadonlySet<string>;
    readonly gets: DirectGets;
    /** How long a direct get may go unanswered (at most `DIRECT_TIMEOUT_MS`). */
    readonly ms: number;
  };
}

/** What to read: the last message of a subject, one by sequence, or the first of a subject at or after a sequence. */
export type MessageQuery =
  | { readonly last_by_subj: string }
  | { readonly seq: number }
  | { readonly seq: number; readonly next_by_subj: string };

/** A subject's last message, as a look sees it. */
export interface Looked {
  readonly seq: number;
  readonly header: HeaderView | undefined;
}

/** The last message of `q.last_by_subj` in `q.stream`, as a look sees it; `null`: none. */
export async function lookMessage(
  src: MessageSource,
  q: { readonly stream: string; readonly last_by_subj: string },
): Promise<Looked | null> {
  if (src.direct.streams.has(q.stream)) {
    const got = await src.direct.gets.look(q.stream, q.last_by_subj, src.direct.ms);
    if (got === null) return null;
    if (got !== ASK_AGAIN) return { seq: sequenceOf(got.header), header: got.header };
  }
  return await fromApi(src, q);
}

/** The message `q` names in `q.stream`, or `null` when there is none. */
export async function getMessage(
  src: MessageSource,
  q: MessageQuery & { readonly stream: string },
): Promise<Stored | null> {
  const { stream, ...query } = q;
  if (src.direct.streams.has(stream)) {
    const got = await src.direct.gets.get(stream, query, src.direct.ms);
    if (got === null) return null;
    if (got !== ASK_AGAIN) {
      const { header, data } = got;
      return {
        subject: header.last("Nats-Subject"),
        seq: sequenceOf(header),
        header,
        data,
        at: isoOfTimestamp(header.last("Nats-Time-Stamp")),
      };
    }
  }
  return await fromApi(src, q);
}

// The message `q` names, through the stream API.
async function fromApi(
  src: MessageSource,
  q: MessageQuery & { readonly stream: string },
): Promise<Stored | null> {
  const { stream, ...query } = q;
  // The stream API takes `next_by_subj` too, though the client's type does not say so.
  const m = await src.jsm.streams.getMessage(stream, query as { seq: number });
  if (m === null) return null;
  return {
    subject: m.subject,
    seq: m.seq,
    header: m.header,
    data: m.data,
    at: isoOfTimestamp(m.timestamp),
  };
}

// The stream sequence a direct get's answer names (0 when it names none).
function sequenceOf(header: Pick<HeaderView, "last">): number {
  const seq = Number(header.last("Nats-Sequence"));
  return Number.isSafeInteger(seq) ? seq : 0;
}

/**
 * Every message of `subject` in `stream` after sequence `after`, oldest first, one request each
 * (no consumer: on nats-server 2.9 a purge elsewhere in the stream moves every consumer past
 * messages it has not delivered). Stops after `until`, when given.
 */
export async function readSubject(
  src: MessageSource,
  q: {
    readonly stream: string;
    readonly subject: string;
    readonly after: number;
    readonly until?: number | undefined;
  },
): Promise<Stored[]> {
  const out: Stored[] = [];
  for (let seq = q.after + 1;;) {
    const m = await getMessage(src, { stream: q.stream, seq, next_by_subj: q.subject });
    if (m === null || (q.until !== undefined && m.seq > q.until)) break;
    out.push(m);
    seq = m.seq + 1;
  }
  return out;
}
