// A file store's kept versions: `<dir>/.history/<key>/<seq>.md`, one file per version, the head's
// bytes hard-linked there when it is written (a delete's version is its record line alone). The
// head file is always the key's newest version, and the version files of a key are committed up
// to the head's sequence number (or, for a deleted key, up to its newest delete): a file above
// that is what a writer killed between its two links left behind, and counts for nothing.
//
// Reading needs no lock: the head is read first, then the key's directory, so a version that a
// concurrent writer commits meanwhile is above the head read and left out, never half-seen.

import { CorruptError, MemoryError, NotFoundError, UnavailableError } from "../../store/errors.ts";
import type { HistoryProblem, HistoryRetention, Version } from "../../store/types.ts";
import type { Evidence, KeyEvidence, Listed } from "../../store/backend.ts";
import { parseEntry } from "../../store/serialize.ts";
import type { Entry } from "../../store/types.ts";
import { quote } from "../../store/text.ts";
import { GENESIS, hashMatches, splitVersion, toVersion, type VersionRecord } from "./envelope.ts";
import { fileMtime, kindOf, listNames, mayRead, removeQuietly } from "./fs.ts";
import { readCurrent, readHead, splitFile } from "./read.ts";
import { keyOf, SUFFIX } from "./names.ts";

/** The directory under the store's that holds every key's versions. */
export const HISTORY_DIR = ".history";
const SEQ_NAME = /^[1-9][0-9]{0,15}\.md$/;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Where a key's versions live. */
export function keyDir(root: string, key: string): string {
  return `${root}/${HISTORY_DIR}/${key}`;
}

/** The file of one version. */
export function versionPath(root: string, key: string, seq: number): string {
  return `${keyDir(root, key)}/${seq}${SUFFIX}`;
}

/** What a key's newest committed version is, seen from its head and its version files. */
export interface Tip {
  /** The head's record; `undefined` when there is no head or it has no record. */
  readonly head: VersionRecord | undefined;
  /** Whether a regular file is under the key's name. */
  readonly headExists: boolean;
  /** The newest committed version: the head's, or with no head the newest delete. */
  readonly committed: VersionRecord | undefined;
  /** The highest sequence any version file (committed or left over) or the head uses. */
  readonly maxSeq: number;
}

/** The versions a key's directory holds, by sequence (no directory: none). */
export function listSeqs(root: string, key: string): number[] {
  const dir = keyDir(root, key);
  const kind = kindOf(dir);
  if (kind === null) return [];
  if (kind !== "dir") throw notADirectory(key);
  const seqs: number[] = [];
  for (const { name, isFile } of listNames(dir)) {
    if (isFile && SEQ_NAME.test(name)) seqs.push(Number(name.slice(0, -SUFFIX.length)));
  }
  return seqs.sort((a, b) => a - b);
}

/** The record of one version file, or `undefined` when it is not there. */
export function recordAt(
  root: string,
  key: string,
  seq: number,
): { record: VersionRecord; description: string | undefined } | undefined {
  const path = versionPath(root, key, seq);
  const head = readHead(path, key);
  if (head === undefined) {
    // Gone (pruned meanwhile), or one this process may not read (a version file shares its
    // memory file's permissions, being the same file): nothing to go by. Otherwise damaged.
    if (kindOf(path) === "file" && mayRead(path)) throw damaged(key, seq);
    return undefined;
  }
  if (head.record === undefined || head.record.seq !== seq) throw damaged(key, seq);
  return { record: head.record, description: head.description };
}

/**
 * The key's tip. `head`: the head file's bytes when the caller has just read them, `null` for a
 * head that exists but cannot be read or has a damaged record (the history alone then says what
 * is committed), `undefined` to read it here.
 */
export function tipOf(root: string, key: string, head?: Uint8Array | null): Tip {
  const bytes = head === undefined ? readCurrent(`${root}/${key}${SUFFIX}`, key) : head;
  const record = bytes === undefined || bytes === null ? undefined : splitFile(bytes, key).record;
  if (record !== undefined) {
    return { head: record, headExists: true, committed: record, maxSeq: record.seq };
  }
  const seqs = listSeqs(root, key);
  // A head with no record (written with history off, or unreadable) commits no version of its
  // own; a deleted key's newest committed version is its newest delete.
  const committed = bytes === undefined
    ? newestDelete(root, key, seqs)
    : newestAny(root, key, seqs);
  let maxSeq = seqs.at(-1) ?? 0;
  if (bytes === undefined && maxSeq > (committed?.seq ?? 0)) {
    // Without a head, a create on top of the newest delete (chained to it) is one that did not
    // finish: its writer was killed, or a power cut lost the head's link. As above an older head,
    // the next version takes its place, so history never shows it and the chain has no gap.
    // Anything else up there (a damaged file, a version whose head an operator removed by hand)
    // stays, for check to report.
    const top = recordQuietly(root, key, maxSeq)?.record;
    if (top?.op === "create" && top.prev === (committed?.hash ?? GENESIS)) maxSeq = top.seq - 1;
  }
  return { head: undefined, headExists: bytes !== undefined, committed, maxSeq };
}

function newestAny(root: string, key: string, seqs: number[]): VersionRecord | undefined {
  for (let i = seqs.length - 1; i >= 0; i--) {
    const found = recordQuietly(root, key, seqs[i]!);
    if (found !== undefined) return found.record;
  }
  return undefined;
}

function newestDelete(root: string, key: string, seqs: number[]): VersionRecord | undefined {
  for (let i = seqs.length - 1; i >= 0; i--) {
    const found = recordQuietly(root, key, seqs[i]!);
    if (found?.record.op === "delete") return found.record;
  }
  return undefined;
}

// A version's record, or undefined when it is gone or damaged: the tip is what the readable
// versions say, so a damaged one (a power cut through a store with `durable: false`, a hand edit)
// never blocks the next write; history() and check report it.
function recordQuietly(root: string, key: string, seq: number) {
  try {
    return recordAt(root, key, seq);
  } catch (e) {
    if (e instanceof CorruptError) return undefined;
    throw e;
  }
}

/** Every committed version of `key`, newest first. */
export function versionsOf(root: string, key: string): Version[] {
  const headPath = `${root}/${key}${SUFFIX}`;
  const head = readHead(headPath, key);
  const tip = head?.record !== undefined
    ? { committed: head.record, maxSeq: head.record.seq }
    : tipOf(root, key);
  const top = tip.committed?.seq ?? 0;
  const out: Version[] = [];
  let sawTop = false;
  for (const seq of listSeqs(root, key).reverse()) {
    if (seq > top) continue;
    const found = recordAt(root, key, seq);
    if (found === undefined) continue; // pruned meanwhile
    if (seq === top) sawTop = true;
    out.push(toVersion(key, found.record, found.description));
  }
  // The head is the newest version even when its link into the history was lost.
  if (!sawTop && head?.record !== undefined) {
    out.unshift(toVersion(key, head.record, head.description));
  }
  return out;
}

/** The entry version `seq` of `key` wrote. */
export function entryAt(root: string, key: string, seq: number): Entry {
  const committed = versionsOf(root, key);
  const v = committed.find((c) => c.revision === String(seq));
  if (v === undefined) {
    throw new NotFoundError(
      `[memory:file] Cannot read version ${seq} of memory ${
        quote(key)
      }: it is not kept (never written, or pruned); history() lists the revisions there are`,
      { key },
    );
  }
  if (v.op === "delete") {
    throw new NotFoundError(
      `[memory:file] Cannot read version ${seq} of memory ${
        quote(key)
      }: it is a delete, which holds nothing; restore the version before it`,
      { key },
    );
  }
  let bytes = readCurrent(versionPath(root, key, seq), key);
  if (bytes === undefined) {
    // Not linked yet or lost in a crash: the head is that version.
    bytes = readCurrent(`${root}/${key}${SUFFIX}`, key);
  }
  const split = bytes === undefined ? undefined : splitFile(bytes, key);
  if (split?.record?.seq !== seq) {
    throw new NotFoundError(
      `[memory:file] Cannot read version ${seq} of memory ${quote(key)}: it was pruned meanwhile`,
      { key },
    );
  }
  return parseEntry(split.entry, key);
}

/** The keys that have a history directory. */
export function historyKeys(root: string): string[] {
  const dir = `${root}/${HISTORY_DIR}`;
  const kind = kindOf(dir);
  if (kind === null) return [];
  if (kind !== "dir") {
    throw new UnavailableError(
      `[memory:file] Cannot read the history: ${HISTORY_DIR} in the memory directory is not a directory; an operator must remove it`,
    );
  }
  const keys: string[] = [];
  for (const { name } of listNames(dir)) {
    const key = keyOf(`${name}${SUFFIX}`);
    if (key !== undefined) keys.push(key);
  }
  return keys.sort();
}

/**
 * Removes versions the retention no longer keeps: beyond the newest `versions` of the key and
 * older than `days`. Never a committed version at or above `keepFrom`. Best effort.
 */
export function prune(root: string, key: string, retention: HistoryRetention, top: number): void {
  try {
    const seqs = listSeqs(root, key).filter((s) => s <= top);
    const old = seqs.length - retention.versions;
    if (old <= 0) return;
    const cutoff = Date.now() - retention.days * DAY_MS;
    for (const seq of seqs.slice(0, old)) {
      const path = versionPath(root, key, seq);
      const mtime = fileMtime(path);
      if (mtime !== undefined && (retention.days === 0 || mtime < cutoff)) removeQuietly(path);
    }
  } catch {
    // Pruning is housekeeping: the next write tries again.
  }
}

/** What is wrong in `key`'s kept versions: edited bytes, a missing link, damaged records. */
export function verifyKey(root: string, key: string): HistoryProblem[] {
  const problems: HistoryProblem[] = [];
  const headBytes = safeRead(`${root}/${key}${SUFFIX}`, key);
  let headRecord: VersionRecord | undefined;
  if (headBytes !== undefined) {
    try {
      headRecord = splitFile(headBytes, key).record;
    } catch (e) {
      problems.push({ key, problem: "damaged", reason: afterColon(e) });
    }
  }
  let seqs: number[];
  try {
    seqs = listSeqs(root, key);
  } catch (e) {
    return [...problems, { key, problem: "damaged", reason: afterColon(e) }];
  }
  if (headRecord !== undefined && !hashMatches(key, headRecord, entryBytes(headBytes!))) {
    problems.push({
      key,
      revision: String(headRecord.seq),
      problem: "edited",
      reason: "the memory file does not match its version's hash (edited by hand?)",
    });
  }
  const top = headRecord?.seq ?? Number.POSITIVE_INFINITY;
  let prev: VersionRecord | undefined;
  for (const seq of seqs) {
    if (seq > top) continue; // left over by a killed writer
    const bytes = safeRead(versionPath(root, key, seq), key);
    if (bytes === undefined) continue;
    let record: VersionRecord | undefined;
    try {
      record = splitVersion(bytes).record;
    } catch (e) {
      problems.push({
        key,
        revision: String(seq),
        problem: "damaged",
        reason: String((e as Error).message),
      });
      prev = undefined;
      continue;
    }
    if (record === undefined || record.seq !== seq) {
      problems.push({
        key,
        revision: String(seq),
        problem: "damaged",
        reason: "the version file has no record of its own sequence",
      });
      prev = undefined;
      continue;
    }
    if (!hashMatches(key, record, bytes.subarray(bytes.indexOf(0x0a) + 1))) {
      problems.push({
        key,
        revision: String(seq),
        problem: "edited",
        reason: "the version's bytes do not match its hash (edited by hand?)",
      });
    }
    if (prev !== undefined && record.prev !== prev.hash) {
      problems.push({
        key,
        revision: String(seq),
        problem: "missing",
        reason:
          `it does not chain to version ${prev.seq} before it (a version between is missing or was replaced)`,
      });
    }
    prev = record;
  }
  if (headRecord !== undefined && prev !== undefined && prev.seq !== headRecord.seq) {
    if (headRecord.prev !== prev.hash || headRecord.seq !== prev.seq + 1) {
      problems.push({
        key,
        revision: String(headRecord.seq),
        problem: "missing",
        reason: `the memory does not chain to its newest kept version ${prev.seq}`,
      });
    }
  }
  return problems;
}

function entryBytes(bytes: Uint8Array): Uint8Array {
  return bytes.subarray(bytes.indexOf(0x0a) + 1);
}

// A copy of a file's bytes (the read buffer is shared), or undefined when it is not there or
// cannot be read.
function safeRead(path: string, key: string): Uint8Array | undefined {
  try {
    const bytes = readCurrent(path, key);
    return bytes === undefined ? undefined : bytes.slice();
  } catch {
    return undefined;
  }
}

function afterColon(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  const at = message.indexOf('": ');
  return at < 0 ? message : message.slice(at + 3);
}

function notADirectory(key: string): UnavailableError {
  return new UnavailableError(
    `[memory:file] Cannot read the history of memory ${
      quote(key)
    }: its entry under ${HISTORY_DIR} is not a directory; an operator must remove it`,
    { key },
  );
}

function damaged(key: string, seq: number): CorruptError {
  return new CorruptError(
    `[memory:file] Cannot read version ${seq} of memory ${
      quote(key)
    }: its version record is damaged; agentmem check names it`,
    { key },
  );
}

/**
 * Every committed version of every key (or of `key`), each key's oldest first; a key whose
 * history cannot be read is skipped and reported.
 */
export function logOf(root: string, key: string | undefined): Listed<Version> {
  const keys = key === undefined ? historyKeys(root) : [key];
  const items: Version[] = [];
  const problems: HistoryProblem[] = [];
  for (const k of keys) {
    try {
      items.push(...versionsOf(root, k).reverse());
    } catch (e) {
      if (!(e instanceof MemoryError)) throw e;
      problems.push({ key: k, problem: "damaged", reason: afterColon(e) });
    }
  }
  items.sort((a, b) =>
    a.at < b.at ? -1 : a.at > b.at ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0
  );
  return { items, problems };
}

/** The chains of every key, and what is wrong in them (for check and anchors). */
export function evidenceOf(root: string): Evidence {
  const keys: KeyEvidence[] = [];
  for (const key of historyKeys(root)) {
    const versions = new Map<string, string>();
    let head: KeyEvidence["head"];
    try {
      for (const seq of listSeqs(root, key)) {
        const found = recordQuietly(root, key, seq);
        if (found !== undefined) versions.set(String(seq), found.record.hash);
      }
      const tip = tipOf(root, key);
      if (tip.committed !== undefined) {
        const c = tip.committed;
        versions.set(String(c.seq), c.hash);
        head = { revision: String(c.seq), hash: c.hash, op: c.op };
      }
    } catch (e) {
      if (!(e instanceof MemoryError)) throw e;
    }
    keys.push({ key, name: key, head, versions, cut: undefined });
  }
  return { within: "", keys, problems: verifyStore(root), notes: [] };
}

/** What is wrong in the history of every key that has one (for `agentmem check`). */
export function verifyStore(root: string): HistoryProblem[] {
  const problems: HistoryProblem[] = [];
  for (const key of historyKeys(root)) {
    problems.push(...verifyKey(root, key));
    const head = safeRead(`${root}/${key}${SUFFIX}`, key);
    if (head !== undefined && splitVersionQuiet(head) === undefined) {
      problems.push({
        key,
        problem: "unrecorded",
        reason:
          "the memory holds an entry no version records (written with history off, or edited by hand)",
      });
    }
  }
  return problems;
}

function splitVersionQuiet(bytes: Uint8Array): VersionRecord | undefined {
  try {
    return splitVersion(bytes).record;
  } catch {
    return undefined;
  }
}
