// Reading a jetstream keyspace's history: a key's versions are the union, by revision, of the
// packs on its history subject and the messages still on its subject in the bucket (see
// mover.ts); the retention decides which of them are kept. And `agentmem check`'s view of it.

import { CorruptError, NotFoundError } from "../../store/errors.ts";
import type { HistoryProblem, HistoryRetention, Version } from "../../store/types.ts";
import type { Evidence, HistoryOps, KeyEvidence, Listed } from "../../store/backend.ts";
import type { Call } from "../../store/backend.ts";
import { parseEntry } from "../../store/serialize.ts";
import type { Entry } from "../../store/types.ts";
import { validateKey } from "../../store/validate.ts";
import { quote } from "../../store/text.ts";
import { GENESIS } from "../../store/chain.ts";
import type { Deadline } from "./errors.ts";
import { PREFIX } from "./errors.ts";
import type { HistoryTarget } from "./mover.ts";
import { decodePack, type Packed } from "./pack.ts";
import { hashMatches, isoOfNanos, readRecord, toVersion } from "./provenance.ts";
import { headerDescription, isMarkerMessage, readAll } from "./scan.ts";
import { nanosOf, type Pulled } from "./pull.ts";
import { UnavailableError } from "../../store/errors.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

/** How a history read runs: as one store call of the backend's, under its deadline. */
export type RunHistory = <T>(
  key: string | undefined,
  call: Call,
  fn: (d: Deadline) => Promise<T>,
) => Promise<T>;

/** The reads of `HistoryOps` over a keyspace's two streams. */
export function historyReads(
  t: HistoryTarget,
  run: RunHistory,
): Pick<HistoryOps, "retention" | "versions" | "readVersion" | "log" | "evidence"> {
  return {
    retention: t.retention,
    versions: (key, call) =>
      run(key, call, async (d): Promise<Listed<Version>> => {
        const h = (await histories(t, d, key)).get(key);
        if (h === undefined) return { items: [], problems: [] };
        const items = keptVersions(h, t.retention).map((v) => versionOf(key, v)).reverse();
        return { items, problems: [] };
      }),
    readVersion: (key, revision, call) =>
      run(key, call, (d) => entryOf(t, key, Number(revision), d)),
    log: (key, call) =>
      run(key, call, async (d): Promise<Listed<Version>> => {
        const items: Version[] = [];
        const problems: HistoryProblem[] = [];
        for (const h of (await histories(t, d, key)).values()) {
          try {
            for (const v of keptVersions(h, t.retention)) items.push(versionOf(h.key, v));
          } catch (e) {
            if (!(e instanceof CorruptError)) throw e;
            problems.push({ key: h.key, problem: "damaged", reason: e.message });
          }
        }
        return { items: items.sort((a, b) => Number(a.revision) - Number(b.revision)), problems };
      }),
    evidence: (call) =>
      run(undefined, call, async (d): Promise<Evidence> => {
        const all = await histories(t, d);
        const within = t.subjectPrefix.split(".").slice(2).join(".");
        const keys: KeyEvidence[] = [];
        for (const h of all.values()) {
          const versions = new Map<string, string>();
          let head: KeyEvidence["head"];
          for (const v of h.items) {
            if (v.record === undefined) continue;
            versions.set(String(v.rev), v.record.hash);
            head = { revision: String(v.rev), hash: v.record.hash, op: v.record.op };
          }
          keys.push({ key: h.key, name: within + h.key, head, versions, cut: undefined });
        }
        return { within, keys, problems: verify(all), notes: [] };
      }),
  };
}

/** One key's history: every version kept, oldest first, and what could not be read. */
export interface KeyHistory {
  readonly key: string;
  /** Oldest first, by revision; unrecorded messages included (they are no versions). */
  readonly items: Packed[];
  /** Packs that could not be read. */
  readonly damaged: string[];
}

/** Every message and pack of `key`, or of the whole keyspace, grouped by key. */
export async function histories(
  t: HistoryTarget,
  d: Deadline,
  key?: string,
): Promise<Map<string, KeyHistory>> {
  // The bucket's stream first: a version a mover takes from there after this read is in its
  // history stream before it is purged, so the read of the history stream after this one has it.
  const live = await collect(
    t,
    t.stream,
    key === undefined ? `${t.subjectPrefix}>` : t.subjectPrefix + key,
    d,
  );
  const packs = await collect(
    t,
    t.hstream,
    key === undefined ? `${t.hsubjectPrefix}>` : t.hsubjectPrefix + key,
    d,
  );
  const byKey = new Map<string, { items: Map<number, Packed>; damaged: string[] }>();
  const entry = (k: string) => {
    let h = byKey.get(k);
    if (h === undefined) byKey.set(k, h = { items: new Map(), damaged: [] });
    return h;
  };
  for (const m of packs) {
    const k = keyOf(t.hsubjectPrefix, m.subject);
    if (k === undefined) continue;
    try {
      for (const v of decodePack(m.data)) entry(k).items.set(v.rev, v);
    } catch (e) {
      entry(k).damaged.push(`the history record at sequence ${m.seq}: ${(e as Error).message}`);
    }
  }
  for (const m of live) {
    const k = keyOf(t.subjectPrefix, m.subject);
    if (k === undefined) continue;
    const read = readRecord(m.headers);
    entry(k).items.set(m.seq, {
      rev: m.seq,
      at: read.record?.at ?? isoOfNanos(nanosOf(m)),
      record: read.record,
      damaged: read.record === undefined ? read.damaged : undefined,
      entry: isMarkerMessage(m.headers) ? new Uint8Array(0) : m.data,
    });
  }
  const out = new Map<string, KeyHistory>();
  for (const [k, h] of [...byKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    out.set(k, {
      key: k,
      items: [...h.items.values()].sort((a, b) => a.rev - b.rev),
      damaged: h.damaged,
    });
  }
  return out;
}

/**
 * The kept versions of one key's history, oldest first: at least the newest `versions`, and
 * every one younger than `days`. Messages without a record are no versions.
 *
 * @throws {CorruptError} when one of them is damaged (`agentmem check` names it).
 */
export function keptVersions(h: KeyHistory, retention: HistoryRetention): Packed[] {
  const recorded: Packed[] = [];
  for (const v of h.items) {
    if (v.damaged !== undefined) throw damagedError(h.key, v.rev);
    if (v.record !== undefined) recorded.push(v);
  }
  if (h.damaged.length > 0) throw damagedError(h.key, undefined);
  const cutoff = Date.now() - retention.days * DAY_MS;
  const from = recorded.length - retention.versions;
  return recorded.filter((v, i) => i >= from || Date.parse(v.at) >= cutoff);
}

/** The public view of a kept version. */
export function versionOf(key: string, v: Packed): Version {
  const description = v.record!.op === "delete" ? undefined : headerDescription(v.entry, key);
  return toVersion(key, v.rev, v.record!, description);
}

/** The entry version `revision` of `key` wrote. */
export async function entryOf(
  t: HistoryTarget,
  key: string,
  revision: number,
  d: Deadline,
): Promise<Entry> {
  const h = (await histories(t, d, key)).get(key) ?? { key, items: [], damaged: [] };
  const v = keptVersions(h, t.retention).find((v) => v.rev === revision);
  if (v === undefined) {
    throw new NotFoundError(
      `${PREFIX} Cannot read version ${revision} of memory ${
        quote(key)
      }: it is not kept (never written, or pruned); history() lists the revisions there are`,
      { key },
    );
  }
  if (v.record!.op === "delete") {
    throw new NotFoundError(
      `${PREFIX} Cannot read version ${revision} of memory ${
        quote(key)
      }: it is a delete, which holds nothing; restore the version before it`,
      { key },
    );
  }
  return parseEntry(v.entry, key);
}

/**
 * What is wrong in the keyspace's history: a version whose bytes do not match its hash
 * (`edited`), one that does not chain to the version before it (`missing`), a record that cannot
 * be read (`damaged`), and a memory whose newest message carries no record (`unrecorded`).
 *
 * A create that follows a delete chains to the key's newest version as the writer saw it just
 * before, which a delete racing it may have superseded: any earlier version of the key will do.
 */
export function verify(all: Map<string, KeyHistory>): HistoryProblem[] {
  const problems: HistoryProblem[] = [];
  for (const h of all.values()) {
    const key = h.key;
    for (const reason of h.damaged) problems.push({ key, problem: "damaged", reason });
    const seen = new Set<string>();
    let prev: Packed | undefined;
    let gap = false;
    for (const v of h.items) {
      const revision = String(v.rev);
      if (v.damaged !== undefined) {
        problems.push({ key, revision, problem: "damaged", reason: `its record: ${v.damaged}` });
        gap = true;
        continue;
      }
      const r = v.record;
      if (r === undefined) {
        gap = true;
        continue;
      }
      if (!hashMatches(key, r, v.entry)) {
        problems.push({
          key,
          revision,
          problem: "edited",
          reason: "the version's bytes do not match its hash (edited by hand?)",
        });
      }
      const chained = prev === undefined || gap || r.prev === prev.record!.hash ||
        (r.op === "create" && (r.prev === GENESIS || seen.has(r.prev)));
      if (!chained) {
        problems.push({
          key,
          revision,
          problem: "missing",
          reason: `it does not chain to version ${
            prev!.rev
          } before it (a version between is missing or was replaced)`,
        });
      }
      seen.add(r.hash);
      prev = v;
      gap = false;
    }
    // A key written only before history (or only with it off) has no versions to break.
    const newest = h.items.at(-1);
    const recorded = h.items.some((v) => v.record !== undefined);
    if (
      recorded && newest !== undefined && newest.record === undefined &&
      newest.damaged === undefined
    ) {
      if (newest.entry.length > 0) {
        problems.push({
          key,
          revision: String(newest.rev),
          problem: "unrecorded",
          reason:
            "the memory holds an entry no version records (written with history off, or by hand)",
        });
      }
    }
  }
  return problems;
}

// Every message of `stream` under `filter`, oldest first; a read cut short is an error.
async function collect(
  t: HistoryTarget,
  stream: string,
  filter: string,
  d: Deadline,
): Promise<Pulled[]> {
  const out: Pulled[] = [];
  const { complete } = await readAll(t, stream, filter, d, {
    lastPerSubject: false,
    headersOnly: false,
    leave: true,
  }, (m) => out.push(m));
  if (!complete) {
    throw new UnavailableError(
      `${PREFIX} Cannot read the history: the read was cut short before it saw every version`,
    );
  }
  return out;
}

function keyOf(subjectPrefix: string, subject: string): string | undefined {
  if (!subject.startsWith(subjectPrefix)) return undefined;
  try {
    return validateKey(subject.slice(subjectPrefix.length));
  } catch {
    return undefined;
  }
}

function damagedError(key: string, revision: number | undefined): CorruptError {
  return new CorruptError(
    `${PREFIX} Cannot read the history of memory ${quote(key)}: ${
      revision === undefined ? "one of its history records" : `the record of version ${revision}`
    } is damaged; agentmem check names it`,
    { key },
  );
}
