// The history this jetstream store keeps, as the store's history functions use it: reads of the
// history stream and the bucket's (history.ts), and restore's and revert's writes, each checked
// against the key's newest version (`commitIf`).

import { serializeValid } from "../../store/serialize.ts";
import { checkCapacity, type ValidWrite } from "../../store/validate.ts";
import type { Call } from "../../store/backend.ts";
import type { HistoryOps } from "../../store/backend.ts";
import { type Deadline, isWrongLastSequence } from "./errors.ts";
import { type Handle, stale } from "./handle.ts";
import { historyReads } from "./history.ts";
import type { Keeper } from "./keeper.ts";
import { movedOf } from "./mover.ts";
import { publish, publishDelete } from "./write.ts";

const ENCODER = new TextEncoder();
const EMPTY = new Uint8Array(0);

/** The history operations of a handle whose history is on. */
export function historyOps(h: Handle, keeper: Keeper): Omit<HistoryOps, "index" | "readLatest"> {
  return {
    ...historyReads(keeper.target, (key, call, fn) => h.run("history", key, call, fn)),
    commitIf: (key, expected, write, call) =>
      h.run(
        write === null ? "delete" : "update",
        key,
        call,
        (d) => commitIf(h, keeper, { key, expected, write }, call, d),
      ),
  };
}

// Writes (or deletes) `key` as a new version only if its newest version is still `expected`.
async function commitIf(
  h: Handle,
  keeper: Keeper,
  c: { readonly key: string; readonly expected: string | null; readonly write: ValidWrite | null },
  call: Call,
  d: Deadline,
): Promise<string> {
  const { key, expected, write } = c;
  const latest = await h.get(key);
  // A deleted key whose versions were moved holds nothing on its subject: its newest version is
  // the last one moved.
  const moved = latest === undefined ? await movedOf(keeper.target, key) : undefined;
  const head = latest?.revision ?? (moved!.to > 0 ? moved!.to : undefined);
  if (String(head ?? null) !== String(expected)) throw stale(key);
  const live = latest?.live ?? false;
  const link = latest !== undefined ? latest.link : moved!.last;
  const subject = h.subject(key);
  const before = h.capacity.current();
  if (write === null) {
    if (!live) return String(head ?? 0);
    const v = h.version(key, "delete", call, link, EMPTY);
    let marker: number;
    try {
      marker = await publishDelete(h.c, subject, head!, d.left(), v.headers);
    } catch (e) {
      if (!isWrongLastSequence(e)) throw e;
      throw stale(key);
    }
    h.capacity.wrote(before, marker, -1);
    call.scope?.forget(h.ns, key);
    await keeper.deleted(key, marker, head!, v.record!, d);
    return String(marker);
  }
  const data = ENCODER.encode(serializeValid(write.description, write.content));
  let from = before;
  if (!live) {
    // Bringing a deleted key back is a create: capacity applies.
    from = await h.count(d);
    h.capacity.offer(from);
    checkCapacity(from.live, key);
  }
  const v = h.version(key, live ? "update" : "create", call, link, data);
  const over = latest?.revision ?? 0;
  let revision: number;
  try {
    revision = await publish(h.c, subject, data, { revision: over }, d.left(), v.headers);
  } catch (e) {
    if (!isWrongLastSequence(e)) throw e;
    throw stale(key);
  }
  h.capacity.wrote(from, revision, 1);
  const overMarker = latest?.live === false;
  h.wrote(call, d, { key, revision, expected: over, v, data, overMarker });
  return String(revision);
}
