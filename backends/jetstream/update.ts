// A jetstream store's update(): revision-checked against what this run read (readBeforeUpdate,
// or a checked call), or with readBeforeUpdate off against the key's newest message as a look
// finds it (a race re-reads and writes again), which also creates a key that holds nothing. With
// history each write chains to the version it replaced.

import { StaleError } from "../../store/errors.ts";
import { checkCapacity } from "../../store/validate.ts";
import { quote } from "../../store/text.ts";
import { isWrongLastSequence, PREFIX } from "./errors.ts";
import {
  churn,
  type Handle,
  type Latest,
  MAX_CAS_ATTEMPTS,
  stale,
  type WriteCall,
} from "./handle.ts";
import { publish } from "./write.ts";

/** Updates the write's key. */
export async function update(h: Handle, x: WriteCall): Promise<void> {
  const { w, call } = x;
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
  await write(h, { ...x, over: { revision: seen } });
}

// update() with readBeforeUpdate off: like the file backend, replace, or create (which counts
// against capacity).
async function replace(h: Handle, x: WriteCall): Promise<void> {
  const { w, d } = x;
  for (let attempt = 1;; attempt++) {
    try {
      return await write(h, { ...x, over: (await h.get(w.key)) ?? null });
    } catch (e) {
      if (!(e instanceof StaleError)) throw e;
      if (attempt >= MAX_CAS_ATTEMPTS || d.cancelled) throw churn("update", w.key);
    }
  }
}

// One write of the entry over the key's message at `over.revision`: one a look found (`Latest`,
// or `null` for a subject that holds nothing), or one this run's scope recorded.
async function write(
  h: Handle,
  x: WriteCall & { readonly over: Latest | null | { readonly revision: number } },
): Promise<void> {
  const { w, call, d, data, over } = x;
  const key = w.key;
  let from = h.capacity.current();
  if (over === null || ("live" in over && !over.live)) {
    // The key holds nothing: this write creates it, and capacity applies.
    from = await h.count();
    h.capacity.offer(from);
    checkCapacity(from.live, key);
  }
  const { after, overMarker } = await h.history.chainAfter(key, over ?? undefined);
  // Over nothing, or over a delete marker (a scope restored from a snapshot can name one): this
  // write brings the key back.
  const op = over === null || overMarker ? "create" : "update";
  const v = h.history.version({ key, op, call, after }, data);
  let revision: number;
  try {
    revision = await publish(h.c, {
      subject: h.subject(key),
      data,
      expect: { revision: over?.revision ?? 0 },
      headers: v.headers,
      d,
    });
  } catch (e) {
    if (!isWrongLastSequence(e)) throw e;
    throw stale(key);
  }
  // Counted as a possible new key: the write may have brought a deleted key back.
  h.capacity.wrote(from, { seq: revision, added: 1 });
  h.wrote(x, { key, revision, v, over: over?.revision ?? 0 });
}
