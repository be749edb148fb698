// A jetstream store's create(): one publish that holds only if the key's subject holds nothing
// (or the delete marker a look found) and, with a bound from this handle's last count or write,
// only if nothing else was written to the stream since (see capacity.ts); otherwise an exact
// count first, beside the read of what the new version chains to. A key this handle saw live is
// looked at first, so a create of it costs one request when it still holds a memory.

import { MAX_ENTRIES } from "../../store/limits.ts";
import { checkCapacity } from "../../store/validate.ts";
import type { Bound } from "./capacity.ts";
import { exists, isWrongLastSequence } from "./errors.ts";
import { churn, type Handle, type Latest, MAX_CAS_ATTEMPTS, type WriteCall } from "./handle.ts";
import { STREAM_SEQUENCE_HEADER_BYTES } from "./wire.ts";
import { publish } from "./write.ts";

/** Creates the write's key, refusing a key that holds a memory. */
export async function create(h: Handle, x: WriteCall): Promise<void> {
  const { w, call, d, data } = x;
  const key = w.key;
  let latest: Latest | undefined;
  if (h.history.seenLive(key)) {
    latest = await h.get(key);
    if (latest?.live) throw exists(key);
  }
  // This handle's own other writes in flight would move the stream past the bound's sequence.
  const bound = h.writingAlone ? h.capacity.usable() : undefined;
  const useBound = bound !== undefined && h.fits(data, STREAM_SEQUENCE_HEADER_BYTES);
  // A store its last count found full counts first: a refusal then costs no history read.
  const full = (h.capacity.current()?.live ?? 0) >= MAX_ENTRIES;
  let counted = useBound || !full ? undefined : await countForCreate(h, key);
  let linkedAt = performance.now();
  let after;
  [counted, { after }] = await Promise.all([
    useBound || counted !== undefined ? counted : countForCreate(h, key),
    h.history.chainAfter(key, latest),
  ]);
  for (let attempt = 1;; attempt++) {
    // What a key whose subject holds nothing chains to is read again when it has grown old.
    if (latest === undefined && performance.now() - linkedAt > h.history.emptyLinkMs) {
      [{ after }, linkedAt] = [await h.history.chainAfter(key, undefined), performance.now()];
    }
    const v = h.history.version({ key, op: "create", call, after }, data);
    const expected = latest?.revision ?? 0;
    try {
      const revision = await publish(h.c, {
        subject: h.subject(key),
        data,
        expect: { revision: expected, ...(counted === undefined ? { streamSeq: bound!.seq } : {}) },
        headers: v.headers,
        d,
      });
      h.capacity.wrote(counted ?? bound, { seq: revision, added: 1 });
      h.wrote(x, { key, revision, v, over: expected });
      return;
    } catch (e) {
      if (!isWrongLastSequence(e)) throw e;
    }
    // Refused: the key holds something, or (with a bound) others wrote to the stream since.
    latest = await h.get(key);
    if (latest?.live) throw exists(key);
    if (attempt >= MAX_CAS_ATTEMPTS || d.cancelled) throw churn("create", key);
    if (counted === undefined) {
      h.capacity.contended(true);
      counted = await countForCreate(h, key);
    }
    [{ after }, linkedAt] = [await h.history.chainAfter(key, latest), performance.now()];
  }
}

// The count a create goes by: refuses a full store (one that holds the key says "exists": that is
// the answer a caller can use).
async function countForCreate(h: Handle, key: string): Promise<Bound> {
  const known = h.capacity.current()?.seq;
  const counted = await h.count();
  // Nothing was written since this store's last write: next time a bound will do.
  if (counted.seq === known) h.capacity.contended(false);
  h.capacity.offer(counted);
  if (counted.live >= MAX_ENTRIES) {
    if ((await h.get(key))?.live) throw exists(key);
    checkCapacity(counted.live, key);
  }
  return counted;
}
