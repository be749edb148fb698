// Direct gets through one reply subscription per connection (`<inbox prefix>.<nuid>.*`, as the
// client's own requests use), answered by token. Unlike the client's request(), a get captures no
// error stack and starts no promise of its own for a timeout, which is most of a direct get's cost
// on the caller's side (a held update makes one beside its publish). What this path cannot answer
// exactly, it leaves to the caller: an answer with a status other than "not found" (no
// responders, a bad request), no answer within the time, the subscription closed or refused,
// resolve `"ask again"`, and the caller asks through the client's API, which says what is wrong.

import { createInbox, Empty, type Msg, type NatsConnection } from "@nats-io/nats-core";
import type { MsgHdrs } from "@nats-io/nats-core";

/** A message a direct get answered with, or `null`: the stream holds none. */
export interface DirectAnswer {
  readonly header: MsgHdrs;
  readonly data: Uint8Array;
}

/** Asks again through the client's API: this path could not tell. */
export const ASK_AGAIN = "ask again";

interface Waiting {
  readonly done: (m: DirectAnswer | null | typeof ASK_AGAIN) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

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
    const inbox = this.#subscribed();
    if (inbox === undefined) return Promise.resolve(ASK_AGAIN);
    const last = "last_by_subj" in query ? query.last_by_subj : undefined;
    const subject = typeof last === "string"
      ? `$JS.API.DIRECT.GET.${stream}.${last}`
      : `$JS.API.DIRECT.GET.${stream}`;
    const payload = typeof last === "string" ? Empty : JSON.stringify(query);
    const token = String(this.#next++);
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#answer(token, ASK_AGAIN), ms);
      this.#waiting.set(token, { done: resolve, timer });
      try {
        this.#nc.publish(subject, payload, { reply: `${inbox}${token}` });
      } catch {
        this.#answer(token, ASK_AGAIN);
      }
    });
  }

  #answer(token: string, a: DirectAnswer | null | typeof ASK_AGAIN): void {
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
    const prefix = (this.#nc as { options?: { inboxPrefix?: string } }).options?.inboxPrefix;
    const inbox = `${createInbox(prefix)}.`;
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
    const header = m.headers;
    // A status: 404 says the stream holds no such message; any other is asked again.
    const code = header?.code ?? 0;
    if (code === 404) return this.#answer(token, null);
    if (header === undefined || code !== 0) return this.#answer(token, ASK_AGAIN);
    this.#answer(token, { header, data: m.data });
  }

  #close(): void {
    this.#broken = true;
    for (const token of [...this.#waiting.keys()]) this.#answer(token, ASK_AGAIN);
  }
}
