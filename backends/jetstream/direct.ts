// Direct gets and stream infos through one reply subscription per connection (an inbox under the
// connection's inbox prefix, made as pull.ts makes one, then `.*`), answered by token. Unlike the
// client's request(), a request here captures no error stack and starts no promise of its own for
// a timeout, which is most of a small request's cost on the caller's side (a held update makes a
// direct get beside its publish; a create among other writers, a stream info). What this path
// cannot answer exactly, it leaves to the caller: an answer with a status other than "not found"
// (no responders, a bad request) or with an API error, no answer within the time, the subscription
// closed or refused, resolve `"ask again"`, and the caller asks through the client's API, which
// says what is wrong.

// Types only: a file-only user loads no NATS module (tests/file/no_nats_test.ts).
import type { Msg, MsgHdrs, NatsConnection } from "@nats-io/nats-core";
import type { JetStreamManager, StreamInfo } from "@nats-io/jetstream";
import { inboxOf } from "./pull.ts";

/** A message a direct get answered with, or `null`: the stream holds none. */
export interface DirectAnswer {
  readonly header: MsgHdrs;
  readonly data: Uint8Array;
}

/** Asks again through the client's API: this path could not tell. */
export const ASK_AGAIN = "ask again";

// What a request resolves with, made of its answer.
type Reader<T> = (m: Msg) => T | typeof ASK_AGAIN;

interface Waiting {
  readonly read: Reader<unknown>;
  readonly done: (answer: unknown) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

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

// One per connection, made at its first get.
const byConnection = new WeakMap<NatsConnection, DirectGets>();

/** The direct gets of `nc`. */
export function directGets(nc: NatsConnection): DirectGets {
  let gets = byConnection.get(nc);
  if (gets === undefined) byConnection.set(nc, gets = new DirectGets(nc));
  return gets;
}

/** Direct gets of one connection, over one reply subscription. */
export class DirectGets {
  readonly #nc: NatsConnection;
  readonly #waiting = new Map<string, Waiting>();
  #inbox: string | undefined;
  #next = 0;
  // The subscription was closed or refused: every get goes through the client's API from then.
  #broken = false;

  constructor(nc: NatsConnection) {
    this.#nc = nc;
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

  /** `stream`'s info (without its subjects) within `ms`. */
  info(stream: string, ms: number): Promise<StreamInfo | typeof ASK_AGAIN> {
    return this.#ask(`$JS.API.STREAM.INFO.${stream}`, { payload: EMPTY, ms }, infoAnswer);
  }

  #ask<T>(
    subject: string,
    o: { readonly payload: Uint8Array | string; readonly ms: number },
    read: Reader<T>,
  ): Promise<T | typeof ASK_AGAIN> {
    const inbox = this.#subscribed();
    if (inbox === undefined) return Promise.resolve(ASK_AGAIN);
    const token = String(this.#next++);
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#answer(token, ASK_AGAIN), o.ms);
      this.#waiting.set(token, { read, done: resolve as (a: unknown) => void, timer });
      try {
        this.#nc.publish(subject, o.payload, { reply: `${inbox}${token}` });
      } catch {
        this.#answer(token, ASK_AGAIN);
      }
    });
  }

  #answer(token: string, a: unknown): void {
    const w = this.#waiting.get(token);
    if (w === undefined) return;
    this.#waiting.delete(token);
    clearTimeout(w.timer);
    w.done(a);
  }

  // The reply subscription's subject prefix (ending in "."), subscribing at the first get.
  #subscribed(): string | undefined {
    if (this.#broken || this.#nc.isClosed() || this.#nc.isDraining()) return undefined;
    if (this.#inbox !== undefined) return this.#inbox;
    const inbox = `${inboxOf(this.#nc)}.`;
    let sub;
    try {
      sub = this.#nc.subscribe(`${inbox}*`, { callback: (err, m) => this.#received(err, m) });
    } catch {
      this.#broken = true;
      return undefined;
    }
    this.#inbox = inbox;
    sub.closed.then(() => this.#close(), () => this.#close());
    return inbox;
  }

  #received(err: Error | null, m: Msg): void {
    if (err !== null) return this.#close();
    const token = m.subject.slice(this.#inbox!.length);
    const w = this.#waiting.get(token);
    if (w !== undefined) this.#answer(token, w.read(m));
  }

  #close(): void {
    this.#broken = true;
    for (const token of [...this.#waiting.keys()]) this.#answer(token, ASK_AGAIN);
  }
}
