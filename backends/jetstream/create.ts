// A jetstream store's create(): one publish that holds only if the key holds nothing (or the
// delete marker a look found) and, with a bound from this handle's last count or write, only if
// nothing else was written to the stream since (see capacity.ts); otherwise an exact count first.
// A full store refuses after one request when nothing changed since its last count.

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
  if (h.keeper !== undefined) return await createVersion(h, x);
  const subject = h.subject(w.key);
  // With a bound from this store's last count or write: one publish that holds only if
  // nothing else was written to the stream since (see capacity.ts).
  const bound = h.capacity.usable();
  const tried = bound !== undefined && h.fits(data, STREAM_SEQUENCE_HEADER_BYTES);
  const rollup = h.c.keepsAll ? "rollup" : undefined;
  if (tried) {
    try {
      const expect = { revision: 0, streamSeq: bound.seq };
      const revision = await publish(h.c, subject, data, expect, d.left(), rollup);
      h.capacity.wrote(bound, revision, 1);
      h.record(call, d, w.key, revision);
      return;
    } catch (e) {
      if (!isWrongLastSequence(e)) throw e;
    }
  }
  // Refused: the key holds something, or others wrote since the bound. Look at the key
  // first, so a key that holds a memory costs no count.
  let latest: Latest | undefined;
  if (tried) {
    latest = await h.get(w.key);
    if (latest?.live) throw exists(w.key);
    h.capacity.contended(true);
  }
  const counted = await countForCreate(h, x, !tried);
  // Expect nothing under the key; when a delete marker is there, expect that marker.
  let expected = latest?.revision ?? 0;
  for (let attempt = 1;; attempt++) {
    try {
      const revision = await publish(h.c, subject, data, { revision: expected }, d.left(), rollup);
      h.capacity.wrote(counted, revision, 1);
      h.record(call, d, w.key, revision);
      return;
    } catch (e) {
      if (!isWrongLastSequence(e)) throw e;
    }
    const now = await h.get(w.key);
    if (now?.live) throw exists(w.key);
    if (attempt >= MAX_CAS_ATTEMPTS || d.cancelled) throw churn("create", w.key);
    expected = now?.revision ?? 0;
  }
}

// create() with history: the key and its history's newest version are looked at together (a
// key that holds a memory costs one round trip), then one publish, revision-checked against
// what the look found and, with a bound from this store's last count or write, against the
// stream's last sequence (see capacity.ts). A key that holds nothing on its subject chains to
// its history's newest version (a deleted key's delete); over a delete marker, to the marker.
async function createVersion(h: Handle, x: WriteCall): Promise<void> {
  const { w, call, d, data } = x;
  const keeper = h.keeper!;
  const bound = h.capacity.usable();
  let counted = bound === undefined ? await countForCreate(h, x, true) : undefined;
  for (let attempt = 1;; attempt++) {
    const [latest, moved] = await Promise.all([h.get(w.key), keeper.linkForCreate(w.key)]);
    if (latest?.live) throw exists(w.key);
    const expected = latest?.revision ?? 0;
    const v = h.version(w.key, "create", call, latest ? latest.link : moved, data);
    const useBound = counted === undefined && h.fits(data, STREAM_SEQUENCE_HEADER_BYTES);
    try {
      const expect = { revision: expected, ...(useBound ? { streamSeq: bound!.seq } : {}) };
      const revision = await publish(h.c, h.subject(w.key), data, expect, d.left(), v.headers);
      h.capacity.wrote(counted ?? bound, revision, 1);
      h.wrote(call, d, { key: w.key, revision, expected, v, data, overMarker: expected > 0 });
      return;
    } catch (e) {
      if (!isWrongLastSequence(e)) throw e;
    }
    if (attempt >= MAX_CAS_ATTEMPTS || d.cancelled) throw churn("create", w.key);
    // Others wrote since the bound (or to the key since the look): count before trying again.
    if (counted === undefined) {
      h.capacity.contended(true);
      counted = await countForCreate(h, x, true);
    }
  }
}

// The count a create goes by: refuses a full store (one that holds `key` says "exists" when
// `look` asks for it: that is the answer a caller can use).
async function countForCreate(h: Handle, x: WriteCall, look: boolean): Promise<Bound> {
  const [key, d] = [x.w.key, x.d];
  const known = h.capacity.current()?.seq;
  const counted = await h.count(d);
  // Nothing was written since this store's last write: next time a bound will do.
  if (counted.seq === known) h.capacity.contended(false);
  h.capacity.offer(counted);
  if (counted.live >= MAX_ENTRIES) {
    if (look && (await h.get(key))?.live) throw exists(key);
    checkCapacity(counted.live, key);
  }
  return counted;
}
