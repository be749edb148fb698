// A jetstream store's update(): revision-checked against what this run read (readBeforeUpdate,
// or a checked call), or with readBeforeUpdate off a replace, or a create when the key holds
// nothing. With history each write chains to the version it replaced.

import { StaleError } from "../../store/errors.ts";
import { checkCapacity } from "../../store/validate.ts";
import { quote } from "../../store/text.ts";
import { isWrongLastSequence, PREFIX } from "./errors.ts";
import {
  churn,
  type Handle,
  MAX_CAS_ATTEMPTS,
  stale,
  type WriteCall,
  type Written,
} from "./handle.ts";
import { publish } from "./write.ts";

/** Updates the write's key. */
export async function update(h: Handle, x: WriteCall): Promise<void> {
  const { w, call, d, data } = x;
  const before = h.capacity.current();
  if (!h.c.readBeforeUpdate && !call.checked) return await replace(h, x);
  const seen = call.scope?.revision(h.ns, w.key);
  if (seen === undefined || seen <= 0) {
    throw new StaleError(
      `${PREFIX} Cannot update memory ${
        quote(w.key)
      }: this run has not read it; read it first, then update`,
      { key: w.key },
    );
  }
  const over = h.keeper === undefined ? undefined : await h.keeper.linkAt(w.key, seen);
  let revision: number;
  let v: Written;
  try {
    v = h.version(w.key, over?.marker ? "create" : "update", call, over?.link, data);
    const headers = v.headers ?? (h.c.keepsAll ? "rollup" : undefined);
    revision = await publish(h.c, h.subject(w.key), data, { revision: seen }, d.left(), headers);
  } catch (e) {
    if (!isWrongLastSequence(e)) throw e;
    throw stale(w.key);
  }
  // Counted as a possible new key: a scope restored from a snapshot could name a delete
  // marker's revision, and then this write brings the key back.
  h.capacity.wrote(before, revision, 1);
  const overMarker = over?.marker ?? false;
  h.wrote(call, d, { key: w.key, revision, expected: seen, v, data, overMarker });
}

// update() with readBeforeUpdate off: like the file backend, replace, or create (which counts
// against capacity). With history, revision-checked against the key's newest message, so each
// version chains to the one it replaced; a race re-reads and writes again.
async function replace(h: Handle, x: WriteCall): Promise<void> {
  const { w, call, d, data } = x;
  for (let attempt = 1;; attempt++) {
    const latest = await h.get(w.key);
    let from = h.capacity.current();
    if (!latest?.live) {
      from = await h.count(d);
      h.capacity.offer(from);
      checkCapacity(from.live, w.key);
    }
    const link = latest?.link ??
      (latest === undefined ? await h.keeper?.linkForCreate(w.key) : undefined);
    const v = h.version(w.key, latest?.live ? "update" : "create", call, link, data);
    const expect = h.keeper === undefined ? {} : { revision: latest?.revision ?? 0 };
    const headers = v.headers ?? (h.c.keepsAll ? "rollup" : undefined);
    let revision: number;
    try {
      revision = await publish(h.c, h.subject(w.key), data, expect, d.left(), headers);
    } catch (e) {
      if (!isWrongLastSequence(e)) throw e;
      if (attempt >= MAX_CAS_ATTEMPTS || d.cancelled) throw churn("update", w.key);
      continue;
    }
    h.capacity.wrote(from, revision, 1);
    const expected = latest?.revision ?? 0;
    h.wrote(call, d, {
      key: w.key,
      revision,
      expected,
      v,
      data,
      overMarker: latest?.live === false,
    });
    return;
  }
}
