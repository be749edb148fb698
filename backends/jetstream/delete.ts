// A jetstream store's delete(): a delete marker written only over the revision looked at (or,
// checked, the one this run read or wrote), so exactly one deleter of a key reports it existed.
// With history the marker is the delete's version, and the key's versions then move out of the
// listed subjects in the background (keeper.ts); without, the marker stays (see MARKERS in
// scan.ts).

import { StaleError } from "../../store/errors.ts";
import { quote } from "../../store/text.ts";
import { isWrongLastSequence, PREFIX } from "./errors.ts";
import { churn, type DeleteCall, type Handle, MAX_CAS_ATTEMPTS } from "./handle.ts";
import type { Over } from "./step.ts";
import { publishDelete } from "./write.ts";

const EMPTY = new Uint8Array(0);

/** Deletes `x.key`; `false` when it held nothing. */
export async function deleteKey(h: Handle, x: DeleteCall): Promise<boolean> {
  const { key, call, seen, d } = x;
  const refused = (why: string) =>
    new StaleError(`${PREFIX} Cannot delete memory ${quote(key)}: ${why}`, { key });
  if (call.checked && (seen === undefined || seen <= 0)) {
    throw refused("this run has not read it; read it first, then delete");
  }
  for (let attempt = 1;; attempt++) {
    const before = h.capacity.current();
    // A revision this run saw can stand in for a look at the key (a checked delete goes by it
    // alone), unless this handle's last guess was wrong (others write its keys too).
    const guess = seen !== undefined && seen > 0 &&
      (call.checked || (attempt === 1 && !h.guesses.contended));
    let over: Over;
    if (guess) over = { revision: seen };
    else {
      const latest = await h.get(key);
      if (!latest?.live) return false;
      // The guess would have held: guess again next time.
      if (latest.revision === seen) h.guesses.contended = false;
      over = latest;
    }
    const { after } = await h.history.chainAfter(key, over);
    const v = h.history.version({ key, op: "delete", call, after }, EMPTY);
    let marker: number;
    try {
      marker = await publishDelete(h.c, {
        subject: h.subject(key),
        expect: { revision: over.revision },
        headers: v.headers,
        d,
      });
    } catch (e) {
      if (!isWrongLastSequence(e)) throw e;
      if (guess) h.guesses.contended = true;
      if (call.checked) {
        throw refused(
          "it changed or was deleted since this run read it; read it again, then delete",
        );
      }
      if (attempt >= MAX_CAS_ATTEMPTS || d.cancelled) throw churn("delete", key);
      continue;
    }
    // A looked-at key was live just before its marker: one key fewer. A scope's revision is
    // trusted for the write, not for the bound.
    h.capacity.wrote(before, { seq: marker, added: guess ? 0 : -1 });
    h.history.deleted(key, { marker, v, over: over.revision });
    return true;
  }
}
