// Direct gets and stream infos through the connection's reply subscription (replies.ts). What this
// path cannot answer exactly, it leaves to the caller: an answer with a status other than "not
// found" (no responders, a bad request) or with an API error, no answer within the time, a request
// not sent or lost, resolve `"ask again"`, and the caller asks through the client's API, which says
// what is wrong. (A held update makes a direct get beside its publish; a create among other
// writers, a stream info.) A look (`DirectGets.look`) reads the answer's headers only when asked
// (header_view.ts), for a caller that needs a few of them and not the message.

// Types only: a file-only user loads no NATS module (tests/file/no_nats_test.ts).
import type { Msg, MsgHdrs, NatsConnection } from "@nats-io/nats-core";
import type { JetStreamManager, StreamInfo } from "@nats-io/jetstream";
import { type Replies, repliesOf } from "./replies.ts";
import { type HeaderView, headerView } from "./header_view.ts";

/** A message a direct get answered with, or `null`: the stream holds none. */
export interface DirectAnswer {
  readonly header: MsgHdrs;
  readonly data: Uint8Array;
}

/** A message a look answered with: its headers, each read when asked for. */
export interface DirectLook {
  readonly header: HeaderView;
}

/** Asks again through the client's API: this path could not tell. */
export const ASK_AGAIN = "ask again";

// What a request resolves with, made of its answer.
type Reader<T> = (m: Msg) => T | typeof ASK_AGAIN;

/** `stream`'s info (without its subjects), through `nc`'s direct gets where they can tell. */
export async function streamInfo(
  src: { readonly nc: NatsConnection; readonly jsm: JetStreamManager },
  stream: string,
): Promise<StreamInfo> {
  const info = await directGets(src.nc).info(stream, INFO_TIMEOUT_MS);
  return info === ASK_AGAIN ? await src.jsm.streams.info(stream) : info;
}

// A stream info unanswered this long is asked again through the client's API (which waits the
// call's own timeout): one second is far beyond a stream info's time on a server that answers.
const INFO_TIMEOUT_MS = 1_000;

const DECODER = new TextDecoder();
const EMPTY = new Uint8Array(0);

// A direct get's answer: 404 says the stream holds no such message; any other status is asked
// again.
const getAnswer: Reader<DirectAnswer | null> = (m) => {
  const header = m.headers;
  const code = header?.code ?? 0;
  if (code === 404) return null;
  if (header === undefined || code !== 0) return ASK_AGAIN;
  return { header, data: m.data };
};

// A look's answer, read as a direct get's is, without decoding every header.
const lookAnswer: Reader<DirectLook | null> = (m) => {
  const header = headerView(m);
  const code = header?.code ?? 0;
  if (code === 404) return null;
  if (header === undefined || code !== 0) return ASK_AGAIN;
  return { header };
};

// A stream info's answer: the API's JSON, unless it is an error (or no info at all).
const infoAnswer: Reader<StreamInfo> = (m) => {
  if ((m.headers?.code ?? 0) !== 0) return ASK_AGAIN;
  try {
    const info = JSON.parse(DECODER.decode(m.data));
    return typeof info?.state?.last_seq === "number" ? info as StreamInfo : ASK_AGAIN;
  } catch {
    return ASK_AGAIN;
  }
};

/** The direct gets of `nc` (over its one reply subscription, however many are made). */
export function directGets(nc: NatsConnection): DirectGets {
  return new DirectGets(nc);
}

/** Direct gets of one connection, over its reply subscription. */
export class DirectGets {
  readonly #replies: Replies;

  constructor(nc: NatsConnection) {
    this.#replies = repliesOf(nc);
  }

  /**
   * The last message of `subject` in `stream` (`query` a subject), or the one a query object
   * names, within `ms`.
   */
  get(
    stream: string,
    query: { readonly last_by_subj: string } | Record<string, unknown>,
    ms: number,
  ): Promise<DirectAnswer | null | typeof ASK_AGAIN> {
    const last = "last_by_subj" in query ? query.last_by_subj : undefined;
    return typeof last === "string"
      ? this.#ask(`$JS.API.DIRECT.GET.${stream}.${last}`, { payload: EMPTY, ms }, getAnswer)
      : this.#ask(
        `$JS.API.DIRECT.GET.${stream}`,
        { payload: JSON.stringify(query), ms },
        getAnswer,
      );
  }

  /**
   * The last message of `subject` in `stream` within `ms`, as `get` answers it, its headers read
   * only when asked for and its data left out.
   */
  look(stream: string, subject: string, ms: number): Promise<DirectLook | null | typeof ASK_AGAIN> {
    return this.#ask(`$JS.API.DIRECT.GET.${stream}.${subject}`, { payload: EMPTY, ms }, lookAnswer);
  }

  /** `stream`'s info (without its subjects) within `ms`. */
  info(stream: string, ms: number): Promise<StreamInfo | typeof ASK_AGAIN> {
    return this.#ask(`$JS.API.STREAM.INFO.${stream}`, { payload: EMPTY, ms }, infoAnswer);
  }

  #ask<T>(
    subject: string,
    o: { readonly payload: Uint8Array | string; readonly ms: number },
    read: Reader<T>,
  ): Promise<T | typeof ASK_AGAIN> {
    const answered = this.#replies.send<T | typeof ASK_AGAIN>({ subject, ...o }, {
      read,
      lost: () => ASK_AGAIN,
    });
    return answered ?? Promise.resolve(ASK_AGAIN);
  }
}
