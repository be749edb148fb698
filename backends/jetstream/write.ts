// The jetstream backend's writes: conditional publishes of entries and delete markers, and the
// purge that removes a marker once it is old.

import type { MsgHdrs } from "@nats-io/nats-core";
import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import {
  apiCode,
  BucketGoneError,
  checkRevision,
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

/**
 * Publishes `data` to `subject` if the expectations hold; resolves to the new revision. A
 * publish nothing answers is checked against the bucket, so a deleted bucket is named as such.
 * `h`: the version's headers (history on), or `"rollup"` to replace whatever the subject held
 * (history off in a bucket that keeps every message).
 */
export async function publish(
  t: WriteTarget,
  subject: string,
  data: Uint8Array,
  expect: Expect,
  timeout: number,
  h?: MsgHdrs | "rollup",
): Promise<number> {
  let hdrs: MsgHdrs | undefined;
  if (h === "rollup") {
    hdrs = t.headers();
    hdrs.set("Nats-Rollup", "sub");
  } else hdrs = h;
  const opts = {
    ...(hdrs === undefined ? {} : { headers: hdrs }),
    timeout,
    expect: {
      ...(expect.revision === undefined ? {} : { lastSubjectSequence: expect.revision }),
      ...(expect.streamSeq === undefined ? {} : { lastSequence: expect.streamSeq }),
    },
  };
  return await acked(t, () => t.js.publish(subject, data, opts));
}

/**
 * Writes a delete marker for `subject` if its latest revision is still `revision`; resolves to
 * the marker's sequence. Only the deleter whose expectation holds writes it.
 */
export async function publishDelete(
  t: WriteTarget,
  subject: string,
  revision: number,
  timeout: number,
  version?: MsgHdrs,
): Promise<number> {
  const h = version ?? t.headers();
  h.set(KV_OPERATION, "DEL");
  const expect = { lastSubjectSequence: revision };
  return await acked(t, () => t.js.publish(subject, undefined, { headers: h, timeout, expect }));
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
  subject: string,
  markerSeq: number,
): Promise<void> {
  await t.jsm.streams.purge(t.stream, { filter: subject, seq: markerSeq + 1 });
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
