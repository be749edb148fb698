// Reading a jetstream keyspace's history: a key's versions are the union, by revision, of the
// packs on its history subject and the messages still on its subject in the bucket (mover.ts).
// One key is read message by message; the whole keyspace through one last-per-subject pass over
// each stream, then each key's remaining messages. What cannot be read is skipped and reported.

import { NotFoundError } from "../../store/errors.ts";
import type { Entry, HistoryProblem, Version } from "../../store/types.ts";
import type { Evidence, KeyEvidence, Listed } from "../../store/backend.ts";
import { parseEntry } from "../../store/serialize.ts";
import { cutCount } from "../../store/retention.ts";
import { validateKey } from "../../store/validate.ts";
import { quote } from "../../store/text.ts";
import { type Deadline, PREFIX } from "./errors.ts";
import { readSubject, type Stored } from "./messages.ts";
import { type HistoryTarget, packedOf } from "./mover.ts";
import { decodePack, EMPTY_STATE, historyMessage, type KeyState, type Packed } from "./pack.ts";
import { isoOfNanos, toVersion } from "./provenance.ts";
import { nanosOf } from "./pull.ts";
import { headerDescription, readAll } from "./scan.ts";
import { heldItems, type KeyHistory, verifyKey } from "./verify.ts";

// How many keys' remaining messages are read at once.
const READS_IN_FLIGHT = 16;

/** Assembles one key's history from what each stream holds of it. */
function assemble(
  t: HistoryTarget,
  k: { readonly key: string; readonly kv: readonly Stored[]; readonly kvh: readonly Stored[] },
): KeyHistory {
  const items = new Map<number, Packed>();
  const damaged: string[] = [];
  const foreign: string[] = [];
  let state: KeyState = EMPTY_STATE;
  let format1 = 0;
  let writerTimes = false;
  for (const m of k.kvh) {
    const h = historyMessage(m.header);
    if (h === undefined) {
      foreign.push(
        `the history stream holds a message at sequence ${m.seq} this library never writes`,
      );
      continue;
    }
    state = h.state;
    if (h.kind !== "pack") continue;
    writerTimes ||= h.format === 1;
    try {
      for (const v of decodePack(m.data, h.format)) items.set(v.rev, v);
    } catch (e) {
      damaged.push(`the history record at sequence ${m.seq}: ${(e as Error).message}`);
    }
  }
  for (const m of k.kv) items.set(m.seq, packedOf(m));
  const sorted = [...items.values()].sort((a, b) => a.rev - b.rev);
  for (const v of sorted) if (v.record?.format === 1) format1++;
  return {
    key: k.key,
    name: t.namePrefix + k.key,
    items: sorted,
    state,
    empty: k.kv.length === 0,
    damaged,
    foreign,
    format1,
    writerTimes,
  };
}

/**
 * One key's history, read message by message: the bucket's subject first, then the history
 * subject (a version a mover takes from the first after it was read is in the second before it
 * is purged). `undefined` when neither holds anything of the key.
 */
export async function keyHistory(t: HistoryTarget, key: string): Promise<KeyHistory | undefined> {
  const kv = await readSubject(t, { stream: t.stream, subject: t.subjectPrefix + key, after: 0 });
  const kvh = await readSubject(t, {
    stream: t.hstream,
    subject: t.hsubjectPrefix + key,
    after: 0,
  });
  if (kv.length === 0 && kvh.length === 0) return undefined;
  return assemble(t, { key, kv, kvh });
}

/**
 * Every key's history: the last message of every subject of each stream, in one pass each, then
 * what else each key holds. A key whose chain does not hold together is read again on its own
 * (a move ran meanwhile), so what is reported is what the streams hold.
 */
export async function allHistories(t: HistoryTarget, d: Deadline): Promise<KeyHistory[]> {
  const heads = await lastPerSubject(t, { stream: t.stream, prefix: t.subjectPrefix, d });
  const tips = await lastPerSubject(t, { stream: t.hstream, prefix: t.hsubjectPrefix, d });
  const keys = [...new Set([...heads.keys(), ...tips.keys()])].sort();
  const out: KeyHistory[] = [];
  for (let i = 0; i < keys.length && !d.cancelled; i += READS_IN_FLIGHT) {
    out.push(
      ...await Promise.all(
        keys.slice(i, i + READS_IN_FLIGHT).map(async (key) => {
          const h = await fill(t, { key, head: heads.get(key), tip: tips.get(key) });
          if (verifyKey(h).length === 0) return h;
          return (await keyHistory(t, key)) ?? h;
        }),
      ),
    );
  }
  if (d.cancelled) {
    throw new Error("the history read was cut short by its deadline");
  }
  return out;
}

// One key's history from its last message in each stream, reading the rest only when there is
// more than those.
async function fill(
  t: HistoryTarget,
  k: { readonly key: string; readonly head: Stored | undefined; readonly tip: Stored | undefined },
): Promise<KeyHistory> {
  const { key, head, tip } = k;
  const h = tip === undefined ? undefined : historyMessage(tip.header);
  const state = h?.state ?? EMPTY_STATE;
  // The last message is all there is: a pack that is the key's only one, or a record alone.
  const alone = h !== undefined &&
    ((h.kind === "cut" && state.packs === 0) || (h.kind === "pack" && state.packs === 1));
  const kvh = tip === undefined
    ? []
    : alone
    ? [tip]
    : await readSubject(t, { stream: t.hstream, subject: t.hsubjectPrefix + key, after: 0 });
  const kv = head === undefined ? [] : head.seq <= state.to ? [head] : await readSubject(t, {
    stream: t.stream,
    subject: t.subjectPrefix + key,
    after: state.to,
    until: head.seq,
  });
  return assemble(t, { key, kv, kvh });
}

// The last message of every subject under `prefix` in `stream`, by key (legal keys only).
async function lastPerSubject(
  t: HistoryTarget,
  s: { readonly stream: string; readonly prefix: string; readonly d: Deadline },
): Promise<Map<string, Stored>> {
  const out = new Map<string, Stored>();
  const { complete } = await readAll(t, {
    stream: s.stream,
    filter: `${s.prefix}>`,
    d: s.d,
    lastPerSubject: true,
    headersOnly: false,
    leave: true,
    onMessage: (m) => {
      const key = keyOf(s.prefix, m.subject);
      if (key === undefined) return;
      const seen = out.get(key);
      if (seen !== undefined && seen.seq > m.seq) return;
      out.set(key, {
        subject: m.subject,
        seq: m.seq,
        header: m.headers,
        data: m.data,
        at: isoOfNanos(nanosOf(m)),
      });
    },
  });
  if (!complete) throw new Error("the history read was cut short before it saw every key");
  return out;
}

/**
 * The versions of `h` the retention keeps, oldest first, as of `now`: its recorded versions above
 * its retention record but the oldest ones `cutCount` lets go.
 */
export function keptVersions(
  h: KeyHistory,
  o: { readonly retention: HistoryTarget["retention"]; readonly now: number },
): Packed[] {
  const recorded = heldItems(h).filter((v) => v.record !== undefined && v.damaged === undefined);
  const n = cutCount(o.retention, {
    ats: recorded.map((v) => Date.parse(v.at)),
    deleted: recorded.at(-1)?.record?.op === "delete",
    now: o.now,
  });
  return recorded.slice(n);
}

/** The public view of a kept version. */
export function versionOf(h: KeyHistory, v: Packed): Version {
  const red = v.redacted;
  const description = v.record!.op === "delete" || red !== undefined
    ? undefined
    : headerDescription(v.entry, h.key);
  const version = toVersion({ key: h.key, revision: v.rev, at: v.at, description }, v.record!);
  if (red === undefined) return version;
  const redacted = {
    at: red.at,
    ...(red.actor === undefined ? {} : { actor: red.actor }),
    reason: red.reason,
  };
  return { ...version, redacted };
}

/** What a history read skipped: the damaged and foreign records of `h`. */
export function skipped(h: KeyHistory): HistoryProblem[] {
  return verifyKey(h).filter((p) => p.problem === "damaged" || p.problem === "foreign");
}

/** The entry version `revision` of `h` wrote. */
export function entryOf(
  h: KeyHistory | undefined,
  o: { readonly key: string; readonly revision: number; readonly kept: readonly Packed[] },
): Entry {
  const v = o.kept.find((v) => v.rev === o.revision);
  if (h === undefined || v === undefined) {
    throw new NotFoundError(
      `${PREFIX} Cannot read version ${o.revision} of memory ${
        quote(o.key)
      }: it is not kept (never written, or pruned); history() lists the revisions there are`,
      { key: o.key },
    );
  }
  if (v.record!.op === "delete") {
    throw new NotFoundError(
      `${PREFIX} Cannot read version ${o.revision} of memory ${
        quote(o.key)
      }: it is a delete, which holds nothing; restore the version before it`,
      { key: o.key },
    );
  }
  const red = v.redacted;
  if (red !== undefined) {
    throw new NotFoundError(
      `${PREFIX} Cannot read version ${o.revision} of memory ${
        quote(o.key)
      }: it was redacted at ${red.at}${red.actor === undefined ? "" : ` by ${red.actor}`} (${
        quote(red.reason)
      }): its description and content are gone`,
      { key: o.key },
    );
  }
  return parseEntry(v.entry, o.key);
}

/** The evidence of every key: its chain, its retention record, and what is wrong in it. */
export function evidenceOf(t: HistoryTarget, all: readonly KeyHistory[]): Evidence {
  const keys: KeyEvidence[] = [];
  const problems: HistoryProblem[] = [];
  let format1 = 0;
  let writerTimes = false;
  const redacted: string[] = [];
  for (const h of all) {
    const versions = new Map<string, string>();
    let head: KeyEvidence["head"];
    for (const v of heldItems(h)) {
      if (v.record === undefined || v.damaged !== undefined) continue;
      versions.set(String(v.rev), v.record.hash);
      head = { revision: String(v.rev), hash: v.record.hash, op: v.record.op };
    }
    const cut = h.state.cut;
    keys.push({
      key: h.key,
      name: h.name,
      head,
      versions,
      cut: cut === undefined ? undefined : { revision: String(cut.rev), hash: cut.hash },
    });
    problems.push(...verifyKey(h));
    format1 += h.format1;
    writerTimes ||= h.writerTimes;
    for (const v of heldItems(h)) {
      const red = v.redacted;
      if (red === undefined) continue;
      redacted.push(
        `${quote(h.key)} version ${v.rev} at ${red.at}${
          red.actor === undefined ? "" : ` by ${red.actor}`
        } (${quote(red.reason)})`,
      );
    }
  }
  const notes = notesOf({ format1, writerTimes });
  if (redacted.length > 0) {
    notes.push(
      `${redacted.length} versions are redacted (their description and content removed; each still verifies from the digest its record keeps): ${
        redacted.slice(0, 5).join("; ")
      }${redacted.length > 5 ? "; …" : ""}`,
    );
  }
  return { within: t.namePrefix, keys, problems, notes };
}

function notesOf(o: { readonly format1: number; readonly writerTimes: boolean }): string[] {
  const notes: string[] = [];
  if (o.format1 > 0) {
    notes.push(
      `${o.format1} version${
        o.format1 === 1 ? " was" : "s were"
      } written in chain format 1 (before this library version): their hashes and links are checked, but format 1 records no place in the chain, so a swap of two of them, or a cut of the oldest, cannot be told from what was written`,
    );
  }
  if (o.writerTimes) {
    notes.push(
      "versions moved to the history stream before chain format 2 show their writer's clock, not the server's",
    );
  }
  return notes;
}

/** What `log` lists of `all`: every kept version, in stream order across keys. */
export function logOf(
  all: readonly KeyHistory[],
  o: { readonly retention: HistoryTarget["retention"]; readonly now: number },
): Listed<Version> {
  const items: Version[] = [];
  const problems: HistoryProblem[] = [];
  for (const h of all) {
    for (const v of keptVersions(h, o)) items.push(versionOf(h, v));
    problems.push(...skipped(h));
  }
  items.sort((a, b) => Number(a.revision) - Number(b.revision));
  return { items, problems };
}

function keyOf(prefix: string, subject: string): string | undefined {
  if (!subject.startsWith(prefix)) return undefined;
  try {
    return validateKey(subject.slice(prefix.length));
  } catch {
    return undefined;
  }
}
