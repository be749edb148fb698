// The jetstream backend's writes: conditional publishes of entries and delete markers, and the
// purge that removes a marker once it is old.

import type { MsgHdrs } from "@nats-io/nats-core";
import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import {
  apiCode,
  BucketGoneError,
  checkRevision,
  type Deadline,
  isNoResponders,
  STREAM_NOT_FOUND,
} from "./errors.ts";
import { KV_OPERATION } from "./wire.ts";

/** Where writes go: one bucket's stream. */
export interface WriteTarget {
  readonly bucket: string;
  readonly stream: string;
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
  const opts = {
    ...(p.headers === undefined ? {} : { headers: p.headers }),
    timeout: p.d.left(),
    expect: {
      ...(p.expect.revision === undefined ? {} : { lastSubjectSequence: p.expect.revision }),
      ...(p.expect.streamSeq === undefined ? {} : { lastSequence: p.expect.streamSeq }),
    },
  };
  return await acked(t, () => t.js.publish(p.subject, p.data, opts));
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
async function acked(t: WriteTarget, send: () => Promise<{ seq: number }>): Promise<number> {
  try {
    return checkRevision((await send()).seq);
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
  t: WriteTarget,
  m: { readonly subject: string; readonly seq: number },
): Promise<void> {
  await t.jsm.streams.purge(t.stream, { filter: m.subject, seq: m.seq + 1 });
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
