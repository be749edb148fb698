// Requests through one reply subscription per connection: an inbox under the connection's inbox
// prefix (made as pull.ts makes one), then `.*`, each request answered by its token. Unlike the
// client's request(), a request here captures no error stack and starts no promise of its own for
// its timeout, which is most of a small request's cost on the caller's side. A request that could
// not be sent (the subscription closed or refused, the connection closed or draining, the publish
// refused by the client) says so at once, so its caller can ask through the client instead; one
// sent and then lost (no answer in time, the subscription closed, the server refusing its subject
// for lack of permission) is handed to the caller's `lost`, which decides what that means. The
// requests waiting share one timer, set for the earliest of their times and cleared when none
// waits, so requests sent together (a held write's look and its proposal) pay for one.

// Types only: a file-only user loads no NATS module (tests/file/no_nats_test.ts).
import type { Msg, MsgHdrs, NatsConnection } from "@nats-io/nats-core";
import { inboxOf } from "./pull.ts";

/** Why a sent request has no answer. */
export type Lost =
  | { readonly why: "timeout" | "closed" }
  /** The server refused the request's subject to this connection's user. */
  | { readonly why: "refused"; readonly error: Error };

/** What a request resolves with: made of its answer, or of why it has none. */
export interface Answer<T> {
  readonly read: (m: Msg) => T;
  readonly lost: (l: Lost) => T;
}

/** What a request sends. */
export interface Request {
  readonly subject: string;
  readonly payload: Uint8Array | string;
  readonly headers?: MsgHdrs | undefined;
  /** How long to wait for its answer. */
  readonly ms: number;
}

interface Waiting {
  readonly subject: string;
  readonly settle: (m: Msg | Lost) => void;
  /** When it is lost for want of an answer (`performance.now()` time). */
  readonly until: number;
}

// One per connection, made at its first request.
const byConnection = new WeakMap<NatsConnection, Replies>();

/** The reply subscription of `nc`. */
export function repliesOf(nc: NatsConnection): Replies {
  let r = byConnection.get(nc);
  if (r === undefined) byConnection.set(nc, r = new Replies(nc));
  return r;
}

/** Requests of one connection, over one reply subscription. */
export class Replies {
  readonly #nc: NatsConnection;
  readonly #waiting = new Map<string, Waiting>();
  #inbox: string | undefined;
  #next = 0;
  // The subscription was closed or refused: nothing is sent this way from then.
  #broken = false;
  // The one timer, while a request waits, and the time it is set for.
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Infinity;

  constructor(nc: NatsConnection) {
    this.#nc = nc;
  }

  /**
   * Sends `r` and resolves with what `on` makes of its answer (a `read` or `lost` that throws
   * rejects); `undefined` when it was not sent.
   */
  send<T>(r: Request, on: Answer<T>): Promise<T> | undefined {
    const inbox = this.#subscribed();
    if (inbox === undefined) return undefined;
    const token = String(this.#next++);
    let settle!: (m: Msg | Lost) => void;
    const answered = new Promise<T>((resolve, reject) => {
      settle = (m) => {
        try {
          resolve("why" in m ? on.lost(m) : on.read(m));
        } catch (e) {
          reject(e);
        }
      };
    });
    const until = performance.now() + r.ms;
    this.#waiting.set(token, { subject: r.subject, settle, until });
    try {
      this.#nc.publish(r.subject, r.payload, {
        reply: `${inbox}${token}`,
        ...(r.headers === undefined ? {} : { headers: r.headers }),
      });
    } catch {
      // Not sent (the client refused it before it reached the socket).
      this.#waiting.delete(token);
      if (this.#waiting.size === 0) this.#clearTimer();
      return undefined;
    }
    this.#setTimer(until);
    return answered;
  }

  #settle(token: string, m: Msg | Lost): void {
    const w = this.#waiting.get(token);
    if (w === undefined) return;
    this.#waiting.delete(token);
    if (this.#waiting.size === 0) this.#clearTimer();
    w.settle(m);
  }

  // Sets the timer for `until` unless it is set for that time or earlier.
  #setTimer(until: number): void {
    if (this.#timer !== undefined && this.#timerAt <= until) return;
    this.#clearTimer();
    this.#timerAt = until;
    this.#timer = setTimeout(() => this.#expire(), Math.max(0, until - performance.now()));
  }

  #clearTimer(): void {
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }

  // The timer went off: every request whose time is up is lost; the timer is set again for the
  // earliest left (a timer may go off a little early: what is not yet due waits for it).
  #expire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = performance.now();
    const due: string[] = [];
    let next = Infinity;
    for (const [token, w] of this.#waiting) {
      if (w.until <= now) due.push(token);
      else next = Math.min(next, w.until);
    }
    for (const token of due) this.#settle(token, { why: "timeout" });
    if (next !== Infinity) this.#setTimer(next);
  }

  // The reply subscription's subject prefix (ending in "."), subscribing at the first request.
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
    void this.#watchRefusals();
    return inbox;
  }

  #received(err: Error | null, m: Msg): void {
    if (err !== null) return this.#close();
    this.#settle(m.subject.slice(this.#inbox!.length), m);
  }

  // A publish the server refuses for lack of permission gets no answer but an error on the
  // connection, naming the subject: every request waiting on that subject is lost at once.
  async #watchRefusals(): Promise<void> {
    try {
      for await (const s of this.#nc.status()) {
        if (s.type !== "error") continue;
        const e = s.error as Error & { operation?: unknown; subject?: unknown };
        if (e?.name !== "PermissionViolationError" || e.operation !== "publish") continue;
        for (const [token, w] of [...this.#waiting]) {
          if (w.subject === e.subject) this.#settle(token, { why: "refused", error: e });
        }
      }
    } catch {
      // The connection's status ended with it; #close answers what still waits.
    }
  }

  #close(): void {
    this.#broken = true;
    for (const token of [...this.#waiting.keys()]) this.#settle(token, { why: "closed" });
  }
}
