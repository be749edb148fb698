// The history this jetstream store keeps, as the store's history functions use it: reads of both
// streams (history.ts), and restore's and revert's writes, each checked against the key's newest
// version (`commitIf`).

import { serializeValid } from "../../store/serialize.ts";
import { checkCapacity, type ValidWrite } from "../../store/validate.ts";
import type { Call, HistoryOps, Listed } from "../../store/backend.ts";
import type { Version } from "../../store/types.ts";
import { type Deadline, isWrongLastSequence } from "./errors.ts";
import { type Handle, stale } from "./handle.ts";
import {
  allHistories,
  entryOf,
  evidenceOf,
  keptVersions,
  keyHistory,
  logOf,
  skipped,
  versionOf,
} from "./history.ts";
import type { Keeper } from "./keeper.ts";
import { movedOf } from "./mover.ts";
import { publish, publishDelete } from "./write.ts";

const ENCODER = new TextEncoder();
const EMPTY = new Uint8Array(0);
// A read of the whole keyspace's history may take this many times a call's timeout.
const BULK_TIMEOUTS = 12;

/** The history operations of a handle whose history is on. */
export function historyOps(
  h: Handle,
  o: { readonly keeper: Keeper; readonly now: () => number },
): Omit<HistoryOps, "index" | "readLatest"> {
  const t = o.keeper.target;
  // What the retention keeps is judged by the clock of whoever reads.
  const kept = () => ({ retention: t.retention, now: o.now() });
  const run = <T>(c: { key: string; call: Call }, fn: (d: Deadline) => Promise<T>) =>
    h.run({ op: "history", ...c }, fn);
  const bulk = <T>(call: Call, fn: (d: Deadline) => Promise<T>) =>
    h.run({ op: "history", key: undefined, call, timeouts: BULK_TIMEOUTS }, fn);
  return {
    retention: t.retention,
    versions: (key, call) =>
      run({ key, call }, async (): Promise<Listed<Version>> => {
        const k = await keyHistory(t, key);
        if (k === undefined) return { items: [], problems: [] };
        return {
          items: keptVersions(k, kept()).map((v) => versionOf(k, v)).reverse(),
          problems: skipped(k),
        };
      }),
    readVersion: (key, revision, call) =>
      run({ key, call }, async () => {
        const k = await keyHistory(t, key);
        const held = k === undefined ? [] : keptVersions(k, kept());
        return entryOf(k, { key, revision: Number(revision), kept: held });
      }),
    log: (key, call) =>
      key === undefined
        ? bulk(call, async (d) => logOf(await allHistories(t, d), kept()))
        : run({ key, call }, async () => {
          const k = await keyHistory(t, key);
          return logOf(k === undefined ? [] : [k], kept());
        }),
    evidence: (call) => bulk(call, async (d) => evidenceOf(t, await allHistories(t, d))),
    commitIf: (key, expected, write, call) =>
      h.run(
        { op: write === null ? "delete" : "update", key, call },
        (d) => commitIf(h, { key, expected, write, call, d }),
      ),
  };
}

/** A commit to run again: it went over a delete marker the keeper may have emptied since. */
const LOOK_AGAIN = Symbol("look again");

type Commit = {
  readonly key: string;
  readonly expected: string | null;
  readonly write: ValidWrite | null;
  readonly call: Call;
  readonly d: Deadline;
};

// Writes (or deletes) `c.key` as a new version only if its newest version is still `c.expected`.
// A write over a delete marker that the keeper emptied between the look and the write (keeper.ts,
// EMPTY_AFTER_MS) looks again: the marker is then the newest version still, in the history stream.
async function commitIf(h: Handle, c: Commit): Promise<string> {
  for (let attempt = 1;; attempt++) {
    const done = await commitOnce(h, c);
    if (done !== LOOK_AGAIN) return done;
    if (attempt >= 3 || c.d.cancelled) throw stale(c.key);
  }
}

async function commitOnce(h: Handle, c: Commit): Promise<string | typeof LOOK_AGAIN> {
  const { key, expected, write, call, d } = c;
  const keeper = h.history as Keeper;
  const latest = await h.get(key);
  // A deleted key whose subject was emptied: its newest version is the last one moved.
  const moved = latest === undefined ? await movedOf(keeper.target, key) : undefined;
  const head = latest?.revision ?? (moved!.state.to > 0 ? moved!.state.to : undefined);
  if (String(head ?? null) !== String(expected)) throw stale(key);
  const live = latest?.live ?? false;
  const { after } = await h.history.chainAfter(key, latest);
  const subject = h.subject(key);
  const before = h.capacity.current();
  if (write === null) {
    if (!live) return String(head ?? 0);
    const v = h.history.version({ key, op: "delete", call, after }, EMPTY);
    let marker: number;
    try {
      marker = await publishDelete(h.c, {
        subject,
        expect: { revision: head! },
        headers: v.headers,
        d,
      });
    } catch (e) {
      if (!isWrongLastSequence(e)) throw e;
      throw stale(key);
    }
    h.capacity.wrote(before, { seq: marker, added: -1 });
    call.scope?.forget(h.ns, key);
    h.history.deleted(key, { marker, v, over: head! });
    return String(marker);
  }
  const data = ENCODER.encode(serializeValid(write.description, write.content));
  let from = before;
  if (!live) {
    // Bringing a deleted key back is a create: capacity applies.
    from = await h.count();
    h.capacity.offer(from);
    checkCapacity(from.live, key);
  }
  const v = h.history.version({ key, op: live ? "update" : "create", call, after }, data);
  let revision: number;
  try {
    revision = await publish(h.c, {
      subject,
      data,
      expect: { revision: latest?.revision ?? 0 },
      headers: v.headers,
      d,
    });
  } catch (e) {
    if (!isWrongLastSequence(e)) throw e;
    if (latest !== undefined && !live) return LOOK_AGAIN;
    throw stale(key);
  }
  h.capacity.wrote(from, { seq: revision, added: 1 });
  h.wrote(c, { key, revision, v, over: latest?.revision ?? 0 });
  return String(revision);
}
