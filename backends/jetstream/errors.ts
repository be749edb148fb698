// The jetstream backend's error vocabulary and call deadlines: NATS failures in words that carry
// no server address or credential, and the time budget every call runs under.

import { ExistsError, UnavailableError } from "../../store/errors.ts";
import { quote } from "../../store/text.ts";
import { JETSTREAM_HISTORY_MIN_VALUE_SIZE, JETSTREAM_MIN_VALUE_SIZE } from "./wire.ts";

/** The backend's registered name. */
export const BACKEND = "jetstream";
/** What every message of this backend starts with. */
export const PREFIX = `[memory:${BACKEND}]`;

/** "wrong last sequence": a conditional write whose expectation did not hold. */
export const WRONG_LAST_SEQUENCE = 10071;
/** The stream (the bucket) does not exist. */
export const STREAM_NOT_FOUND = 10059;
/** The message is over the stream's max message size. */
export const MESSAGE_TOO_LARGE = 10054;

/** The numeric JetStream API code of an error, when it has one. */
export function apiCode(e: unknown): number | undefined {
  if (!(e instanceof Error)) return undefined;
  const code = (e as { code?: unknown }).code;
  return typeof code === "number" && e.name.endsWith("Error") ? code : undefined;
}

/** The name of an error's class, or the type of a non-error. */
export function errorName(e: unknown): string {
  return e instanceof Error ? e.name : typeof e;
}

/** `true` for an error that says a conditional write's expectation did not hold. */
export function isWrongLastSequence(e: unknown): boolean {
  return apiCode(e) === WRONG_LAST_SEQUENCE;
}

/**
 * `true` for an error a publish gets when nothing listens on its subject: on a server with
 * JetStream, that means the bucket's stream is gone.
 */
export function isNoResponders(e: unknown): boolean {
  const name = errorName(e);
  return name === "JetStreamNotEnabled" || name === "NoRespondersError";
}

/**
 * A publish or API request answered with a JetStream API error (`code`, the error's JetStream
 * code), sent through the connection's reply subscription (replies.ts), not the client's request().
 */
export class RefusedError extends Error {
  override readonly name = "RefusedError";
  /** The JetStream error code; none for an answer that is no API answer at all. */
  readonly code: number | undefined;

  constructor(error: { readonly err_code?: unknown; readonly description?: unknown }) {
    super(`JetStream refused the request: ${String(error.description ?? "no description")}`);
    this.code = typeof error.err_code === "number" ? error.err_code : undefined;
  }
}

/**
 * A request answered "no responders": nothing listens on its subject. It carries the client's
 * own name for this, so `isNoResponders` and `reason` take both alike.
 */
export class NoRespondersError extends Error {
  override readonly name = "NoRespondersError";
}

/** A request no answer came to within its time; the client's own name for it, as above. */
export class TimeoutError extends Error {
  override readonly name = "TimeoutError";
}

/** A request whose answer cannot come: the reply subscription closed while it waited. */
export class AnswerLostError extends Error {
  override readonly name = "AnswerLostError";
}

/** A write nothing answered because the bucket's stream is gone. */
export class BucketGoneError extends Error {
  override readonly name = "BucketGoneError";
}

/**
 * Why a NATS call failed, in words that carry no server address or credential.
 *
 * @param e The failure.
 * @param bucket The bucket, named when it is the bucket that is missing.
 * @param within The call's timeout in words, which the client's own request timeout matches.
 */
export function reason(e: unknown, bucket: string, within: string): string {
  const code = apiCode(e);
  if (code === STREAM_NOT_FOUND) return bucketGone(bucket);
  if (code === MESSAGE_TOO_LARGE) {
    return `the bucket refused the entry as too large; its max value size must be at least ${JETSTREAM_HISTORY_MIN_VALUE_SIZE} bytes with history (${JETSTREAM_MIN_VALUE_SIZE} without), which agentmem bucket init gives it keeping every memory`;
  }
  if (code !== undefined) return `JetStream refused the request (error ${code})`;
  switch (errorName(e)) {
    case "BucketGoneError":
      return bucketGone(bucket);
    case "TimeoutError":
      return `NATS did not answer within ${within}`;
    case "JetStreamNotEnabled":
    case "NoResponders":
    case "NoRespondersError":
      return "no JetStream server answered";
    case "ClosedConnectionError":
      return "the NATS connection is closed";
    case "RefusedError":
      return "JetStream's answer was not one the client understands";
    case "AnswerLostError":
      return "the NATS connection closed its reply subscription before the answer came";
    case "DrainingConnectionError":
      return "the NATS connection is draining";
    case "PermissionViolationError":
      return "the NATS user is not permitted to make this request";
    case "RequestError":
      return e instanceof Error && e.message.startsWith("Permissions Violation")
        ? "the NATS user is not permitted to make this request"
        : "the NATS request failed (RequestError)";
    default:
      return `the NATS client failed (${errorName(e)})`;
  }
}

/** The words for a bucket deleted after the store opened. */
export function bucketGone(bucket: string): string {
  return `memory bucket ${
    quote(bucket)
  } no longer exists (it was deleted after this store opened); recreate it, then open the store again`;
}

/** The answer to a create of a key that holds a memory. */
export function exists(key: string): ExistsError {
  return new ExistsError(`${PREFIX} Cannot create memory ${quote(key)}: it already exists`, {
    key,
  });
}

/** Checks that a revision from the server is one JavaScript represents exactly. */
export function checkRevision(revision: number): number {
  if (!Number.isSafeInteger(revision) || revision <= 0) {
    throw new UnavailableError(
      `${PREFIX} The bucket reported revision ${revision}, which JavaScript cannot represent exactly (the stream is past sequence 2^53); move the memories to a new bucket`,
    );
  }
  return revision;
}

/** A call's time budget, and whether its caller has stopped waiting. */
export class Deadline {
  readonly #end: number;
  #cancelled = false;
  readonly #onCancel: Array<() => void> = [];

  constructor(ms: number) {
    this.#end = Date.now() + ms;
  }

  /** Milliseconds left, at least 1. */
  left(): number {
    return Math.max(1, this.#end - Date.now());
  }

  /** Whether the caller has been answered already (timeout, abort or the call's end). */
  get cancelled(): boolean {
    return this.#cancelled;
  }

  /** Runs `fn` when the call is cancelled (at once when it already is). */
  onCancel(fn: () => void): void {
    if (this.#cancelled) fn();
    else this.#onCancel.push(fn);
  }

  /** Marks the call as answered and runs its cancel hooks. */
  cancel(): void {
    if (this.#cancelled) return;
    this.#cancelled = true;
    for (const fn of this.#onCancel.splice(0)) fn();
  }
}

/** How long `withDeadline`'s work may take, what aborts it, and the error either gives. */
export interface Limit {
  readonly ms: number;
  readonly signal: AbortSignal | undefined;
  readonly fail: (why: "timeout" | "abort", cause?: unknown) => Error;
}

/**
 * Settles with `work`, or rejects with `fail(...)` when `ms` pass or `signal` aborts first. The
 * work keeps running in the background; its late failure is observed so it is never unhandled.
 */
export function withDeadline<T>(work: Promise<T>, limit: Limit): Promise<T> {
  const { ms, signal, fail } = limit;
  work.catch(() => {});
  return new Promise<T>((resolve, reject) => {
    const settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      settle();
      reject(fail("abort", signal?.reason));
    };
    const timer = setTimeout(() => {
      settle();
      reject(fail("timeout"));
    }, ms);
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        settle();
        resolve(value);
      },
      (e) => {
        settle();
        reject(e);
      },
    );
  });
}

/**
 * Settles with `work`, or rejects with `fail(cause)` when `signal` aborts first: for a call of a
 * single request, whose timeout the NATS client already enforces, so no timer is needed.
 */
export function withAbort<T>(
  work: Promise<T>,
  limit: { readonly signal: AbortSignal; readonly fail: (cause: unknown) => Error },
): Promise<T> {
  const { signal, fail } = limit;
  work.catch(() => {});
  if (signal.aborted) return Promise.reject(fail(signal.reason));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(fail(signal.reason));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}
