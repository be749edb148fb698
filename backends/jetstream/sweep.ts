// Expiring deleted keys by `days`: a key deleted more than `days` ago keeps only its retention
// record (a few bytes). Nothing touches a deleted key again, so a sweep walks the history stream
// from where the last one stopped (a watermark every handle of the keyspace shares) to the first
// message younger than `days`, and expires every deleted key whose history ends there.

import { validateKey } from "../../store/validate.ts";
import { getMessage } from "./messages.ts";
import { type HistoryTarget, movedOf, prune } from "./mover.ts";
import { historyMessage } from "./pack.ts";
import { isMarkerMessage } from "./scan.ts";

const DAY_MS = 24 * 60 * 60 * 1000;
/** How many history messages one sweep looks at, at most (the next one goes on from there). */
export const SWEEP_BATCH = 1_000;
const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

/** Where a keyspace's sweeps record how far they got. */
export function watermarkSubject(t: HistoryTarget): string {
  const [, bucket = ""] = t.hsubjectPrefix.split(".");
  const prefix = t.namePrefix.slice(0, -1);
  return `$KVH.${bucket}.~sweep${prefix === "" ? "" : `.${prefix}`}`;
}

/**
 * One sweep as of `now` (the server's time, in milliseconds).
 *
 * @returns Whether the sweep stopped at its batch with old messages left to look at.
 */
export async function sweep(t: HistoryTarget, now: number): Promise<boolean> {
  if (t.retention.days === 0) return false;
  const cutoff = now - t.retention.days * DAY_MS;
  const mark = watermarkSubject(t);
  const held = await getMessage(t, { stream: t.hstream, last_by_subj: mark });
  const from = held === null ? 0 : Number(DECODER.decode(held.data)) || 0;
  let last = from;
  let more = false;
  for (let looked = 0, seq = from + 1;; looked++) {
    if (looked >= SWEEP_BATCH) {
      more = true;
      break;
    }
    const m = await getMessage(t, { stream: t.hstream, seq, next_by_subj: `${t.hsubjectPrefix}>` });
    if (m === null || Date.parse(m.at) >= cutoff) break;
    const key = keyOf(t, m.subject);
    const h = historyMessage(m.header);
    if (key !== undefined && h?.state.tip?.op === "delete" && !expired(h.state)) {
      await expire(t, { key, seq: m.seq, now });
    }
    last = m.seq;
    seq = m.seq + 1;
  }
  if (last > from) {
    const ack = await t.js.publish(mark, ENCODER.encode(String(last)), {
      expect: { lastSubjectSequence: held?.seq ?? 0 },
    }).catch(() => undefined); // another sweep moved it: theirs stands
    if (ack !== undefined) await t.jsm.streams.purge(t.hstream, { filter: mark, seq: ack.seq });
  }
  return more;
}

function expired(
  s: {
    readonly held: number;
    readonly cut?: { readonly rev: number } | undefined;
    readonly to: number;
  },
): boolean {
  return s.held === 0 && s.cut?.rev === s.to;
}

// Expires `key` when the history message at `seq` is still its last and its subject in the
// bucket holds nothing newer than what the history stream holds (it was not created again).
async function expire(
  t: HistoryTarget,
  k: { readonly key: string; readonly seq: number; readonly now: number },
): Promise<void> {
  const [moved, head] = await Promise.all([
    movedOf(t, k.key),
    getMessage(t, { stream: t.stream, last_by_subj: t.subjectPrefix + k.key }),
  ]);
  if (moved.seq !== k.seq) return;
  if (head !== null && (!isMarkerMessage(head.header) || head.seq > moved.state.to)) return;
  await prune(t, { key: k.key, now: k.now });
}

function keyOf(t: HistoryTarget, subject: string): string | undefined {
  if (!subject.startsWith(t.hsubjectPrefix)) return undefined;
  try {
    return validateKey(subject.slice(t.hsubjectPrefix.length));
  } catch {
    return undefined;
  }
}
