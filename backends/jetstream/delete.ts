// A jetstream store's delete(): a delete marker written only over the revision looked at (or,
// checked, the one this run read or wrote), so exactly one deleter of a key reports it existed.
// With history the marker is the delete's version, and the key's versions then move out of the
// listed subjects (keeper.ts); without, the marker stays (see MARKERS in scan.ts).

import { StaleError } from "../../store/errors.ts";
import { quote } from "../../store/text.ts";
import { isWrongLastSequence, PREFIX } from "./errors.ts";
import { churn, type DeleteCall, type Handle, MAX_CAS_ATTEMPTS, type Written } from "./handle.ts";
import type { Link } from "./provenance.ts";
import { publishDelete } from "./write.ts";

const EMPTY = new Uint8Array(0);

/** Deletes `x.key`; `false` when it held nothing. */
export async function deleteKey(h: Handle, x: DeleteCall): Promise<boolean> {
  const { key, call, seen, d } = x;
  if (call.checked) return await checkedDelete(h, x);
  for (let attempt = 1;; attempt++) {
    const before = h.capacity.current();
    // A revision this run saw can stand in for a look at the key.
    const guess = attempt === 1 && seen !== undefined && seen > 0;
    let revision: number;
    let link: Link | undefined;
    if (guess) {
      revision = seen;
      link = (await h.keeper?.linkAt(key, seen))?.link;
    } else {
      const latest = await h.get(key);
      if (!latest?.live) return false;
      revision = latest.revision;
      link = latest.link;
    }
    // Only the deleter whose expected revision is still the latest writes the marker.
    let marker: number;
    let v: Written;
    try {
      v = h.version(key, "delete", call, link, EMPTY);
      marker = await publishDelete(h.c, h.subject(key), revision, d.left(), v.headers);
    } catch (e) {
      if (!isWrongLastSequence(e)) throw e;
      if (attempt >= MAX_CAS_ATTEMPTS || d.cancelled) throw churn("delete", key);
      continue;
    }
    // A looked-at key was live just before its marker: one key fewer. A scope's revision is
    // trusted for the write, not for the bound.
    h.capacity.wrote(before, marker, guess ? 0 : -1);
    // With history, the key's versions move out and its subject is emptied; without, the
    // marker stays (see MARKERS in scan.ts).
    if (v.record !== undefined) await h.keeper?.deleted(key, marker, revision, v.record, d);
    return true;
  }
}

// A delete that writes its marker only at the revision this run read or wrote (see Call).
async function checkedDelete(h: Handle, x: DeleteCall): Promise<boolean> {
  const { key, call, seen, d } = x;
  const refused = (why: string) =>
    new StaleError(`${PREFIX} Cannot delete memory ${quote(key)}: ${why}`, { key });
  if (seen === undefined || seen <= 0) {
    throw refused("this run has not read it; read it first, then delete");
  }
  const before = h.capacity.current();
  const link = (await h.keeper?.linkAt(key, seen))?.link;
  const v = h.version(key, "delete", call, link, EMPTY);
  let marker: number;
  try {
    marker = await publishDelete(h.c, h.subject(key), seen, d.left(), v.headers);
  } catch (e) {
    if (!isWrongLastSequence(e)) throw e;
    throw refused("it changed or was deleted since this run read it; read it again, then delete");
  }
  h.capacity.wrote(before, marker, 0);
  if (v.record !== undefined) await h.keeper?.deleted(key, marker, seen, v.record, d);
  return true;
}
