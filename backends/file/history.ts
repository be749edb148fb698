// The file backend's history reads: a key's versions, one version's entry, the log across keys,
// and the evidence `agentmem check` and anchors judge. Each key is read as chain.ts reads it;
// what cannot be read is skipped and reported, and never stops the other keys.

import * as fs from "node:fs";
import { NotFoundError } from "../../store/errors.ts";
import { parseEntry } from "../../store/serialize.ts";
import type { Entry, HistoryProblem, Redaction, Version } from "../../store/types.ts";
import type { Evidence, KeyEvidence, Listed } from "../../store/backend.ts";
import { quote } from "../../store/text.ts";
import { toVersion } from "./envelope.ts";
import { type Dir, namesIn, NotOurDir, openDir } from "./dirs.ts";
import { type KeyHistory, readKey } from "./chain.ts";
import type { ExpiredIndex } from "./cut.ts";
import { close, listNames } from "./fs.ts";
import { bytesOf, openFile, splitFile } from "./read.ts";
import {
  EXPIRED_NAME,
  HISTORY_DIR,
  keyOf,
  keyOfTemp,
  legalKey,
  SUFFIX,
  SWEPT_NAME,
  TEMP_SUFFIX,
  versionName,
} from "./names.ts";

/** What the reads need: the store's directory and its expired keys' records. */
export interface HistoryRoot {
  readonly root: string;
  readonly expired: ExpiredIndex;
}

// What a listing skips, and so reports (the rest is check's to say).
const SKIPPED: ReadonlySet<HistoryProblem["problem"]> = new Set([
  "damaged",
  "foreign",
  "rolled_back",
  "edited",
]);

/** Every version of `key`'s chain, newest first. */
export function versionsOf(h: HistoryRoot, key: string): Listed<Version> {
  return withHistory(h, (hd) => {
    const kh = readOne(h, hd, key);
    return {
      items: kh.chain.map((f) => toVersion(key, f.record!, f.description)),
      problems: skipped(kh),
    };
  });
}

/** The entry version `revision` of `key` wrote. */
export function entryAt(h: HistoryRoot, key: string, revision: string): Entry {
  return withHistory(h, (hd) => {
    const kh = readOne(h, hd, key);
    const found = kh.chain.find((f) => String(f.seq) === revision);
    if (found === undefined) {
      throw new NotFoundError(
        `[memory:file] Cannot read version ${revision} of memory ${
          quote(key)
        }: it is not kept (never written, or pruned); history() lists the revisions there are`,
        { key },
      );
    }
    const red = found.record!.redacted;
    if (red !== undefined) {
      throw new NotFoundError(
        `[memory:file] Cannot read version ${revision} of memory ${
          quote(key)
        }: it was redacted at ${red.at}${red.actor === undefined ? "" : ` by ${red.actor}`} (${
          quote(red.reason)
        }): its description and content are gone`,
        { key },
      );
    }
    if (found.record!.op === "delete") {
      throw new NotFoundError(
        `[memory:file] Cannot read version ${revision} of memory ${
          quote(key)
        }: it is a delete, which holds nothing; restore the version before it`,
        { key },
      );
    }
    const entry = (found.place === "head"
      ? undefined
      : withKeyDir(hd, key, (kd) =>
        entryBytes(kd.at(versionName(found.seq)), key, found.seq))) ??
      entryBytes(`${h.root}/${key}${SUFFIX}`, key, found.seq);
    if (entry === undefined) {
      throw new NotFoundError(
        `[memory:file] Cannot read version ${revision} of memory ${
          quote(key)
        }: it was pruned meanwhile`,
        { key },
      );
    }
    return parseEntry(entry, key);
  });
}

// The entry bytes of `path` when it holds version `seq` (a copy), else undefined.
function entryBytes(path: string, key: string, seq: number): Uint8Array | undefined {
  const o = openFile(path);
  if (!("fd" in o)) return undefined;
  try {
    const bytes = bytesOf(o.fd);
    if (bytes === undefined) return undefined;
    const split = splitFile(bytes, key);
    return split.record?.seq === seq ? split.entry.slice() : undefined;
  } finally {
    close(o.fd);
  }
}

/** Every version of every key (or of `key`), oldest first, keys interleaved by `at`. */
export function logOf(h: HistoryRoot, key: string | undefined): Listed<Version> {
  return withHistory(h, (hd) => {
    const items: Version[] = [];
    const problems: HistoryProblem[] = [];
    const taken = new Set<string>();
    const inHistory = key !== undefined
      ? [key]
      : hd === undefined
      ? []
      : keysIn(hd, { problems, taken });
    const named = new Set(inHistory);
    for (const k of key !== undefined ? inHistory : withHeads(h.root, { keys: inHistory, taken })) {
      const kh = readOne(h, hd, k);
      if (kh.chain.length === 0 && !named.has(k)) continue;
      problems.push(...skipped(kh));
      for (const f of [...kh.chain].reverse()) items.push(toVersion(k, f.record!, f.description));
    }
    return { items: interleaved(items), problems };
  });
}

// Keys interleaved by `at` (the writers' clocks), each key's versions in the order of its chain
// within the places they hold: a clock never reorders one key's versions.
function interleaved(items: Version[]): Version[] {
  const byKey = new Map<string, Version[]>();
  for (const v of items) {
    let list = byKey.get(v.key);
    if (list === undefined) byKey.set(v.key, list = []);
    list.push(v); // each key's arrive in chain order
  }
  const places = [...items].sort((a, b) =>
    a.at < b.at ? -1 : a.at > b.at ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0
  );
  const taken = new Map<string, number>();
  return places.map(({ key }) => {
    const n = taken.get(key) ?? 0;
    taken.set(key, n + 1);
    return byKey.get(key)![n]!;
  });
}

/** The chains of every key and what is wrong in them (for check and anchors). */
export function evidenceOf(h: HistoryRoot): Evidence {
  const temps = stagedFiles(h.root);
  return withHistory(h, (hd) => {
    const problems: HistoryProblem[] = [];
    const keys: KeyEvidence[] = [];
    const notes: string[] = [];
    let format1 = 0;
    let format1Keys = 0;
    const redacted: string[] = [];
    const legacy: string[] = [];
    const expired = hd === undefined ? new Map() : h.expired.read(hd).byKey;
    const damagedLines = hd === undefined ? 0 : h.expired.read(hd).damaged;
    if (damagedLines > 0) {
      problems.push({
        key: `${HISTORY_DIR}/${EXPIRED_NAME}`,
        problem: "damaged",
        reason: `${damagedLines} of its retention records cannot be read`,
      });
    }
    const taken = new Set<string>();
    const names = new Set([
      ...(hd === undefined ? [] : keysIn(hd, { problems, taken })),
      ...expired.keys(),
    ]);
    for (const key of withHeads(h.root, { keys: [...names], taken })) {
      const kh = readKey(key, { root: h.root, hd, expired: expired.get(key), verify: true, temps });
      // A memory with no history directory is judged when its head is a version (one written
      // with history off is not, until a write with history on records it).
      if (!names.has(key) && kh.chain.length === 0) continue;
      problems.push(...kh.problems);
      if (kh.format1 > 0) {
        format1 += kh.format1;
        format1Keys++;
      }
      if (kh.legacyCut) legacy.push(key);
      for (const f of kh.chain) {
        const red = f.record?.redacted;
        if (red !== undefined) redacted.push(redactionNote(key, f.seq, red));
      }
      keys.push(keyEvidence(kh));
    }
    if (format1 > 0) {
      notes.push(
        `${format1} versions of ${format1Keys} keys are in chain format 1 (written before format 2), which does not cover a version's place in its chain: two of them swapped would not be seen`,
      );
    }
    if (legacy.length > 0) {
      notes.push(
        `${legacy.length} keys (${legacy.slice(0, 5).map(quote).join(", ")}${
          legacy.length > 5 ? ", …" : ""
        }) had old versions pruned before retention records existed: a truncation there cannot be told from retention`,
      );
    }
    if (redacted.length > 0) {
      notes.push(
        `${redacted.length} versions are redacted (their description and content removed; each still verifies from the digest its record keeps): ${
          redacted.slice(0, 5).join("; ")
        }${redacted.length > 5 ? "; …" : ""}`,
      );
    }
    keys.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    problems.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return { within: "", keys, problems, notes };
  });
}

function redactionNote(key: string, seq: number, red: Redaction): string {
  return `${quote(key)} version ${seq} at ${red.at}${
    red.actor === undefined ? "" : ` by ${red.actor}`
  } (${quote(red.reason)})`;
}

function keyEvidence(kh: KeyHistory): KeyEvidence {
  const tip = kh.tip;
  return {
    key: kh.key,
    name: kh.key,
    head: tip === undefined ? undefined : { revision: String(tip.seq), hash: tip.hash, op: tip.op },
    versions: kh.hashes,
    cut: kh.cut === undefined ? undefined : { revision: kh.cut.revision, hash: kh.cut.hash },
  };
}

function skipped(kh: KeyHistory): HistoryProblem[] {
  return kh.problems.filter((p) => SKIPPED.has(p.problem));
}

function readOne(h: HistoryRoot, hd: Dir | undefined, key: string): KeyHistory {
  const expired = hd === undefined ? undefined : h.expired.read(hd).byKey.get(key);
  return readKey(key, { root: h.root, hd, expired });
}

// `keys`, and the keys of the store's memory files: a head can be a version with no directory of
// its key under `.history` (a cut lost an unacknowledged create's), and is judged as one. Not
// those whose name under `.history` (`taken`) is something else, which is reported as that.
function withHeads(root: string, o: { keys: string[]; taken: ReadonlySet<string> }): string[] {
  const all = new Set(o.keys);
  for (const { name, isFile } of listNames(root)) {
    const key = isFile ? keyOf(name) : undefined;
    if (key !== undefined && !o.taken.has(key)) all.add(key);
  }
  return [...all].sort();
}

// The key names under `.history`, reporting anything else there.
function keysIn(
  hd: Dir,
  o: { problems: HistoryProblem[]; taken: Set<string> },
): string[] {
  const { problems } = o;
  const keys: string[] = [];
  for (const { name, isFile, isDir } of namesIn(hd)) {
    o.taken.add(name);
    if (isDir && legalKey(name) !== undefined) keys.push(name);
    else if (isFile && (name === EXPIRED_NAME || name === SWEPT_NAME)) continue;
    else if (isFile && name.startsWith(".") && name.endsWith(TEMP_SUFFIX)) continue;
    else {
      problems.push({
        key: `${HISTORY_DIR}/${name}`,
        problem: "foreign",
        reason:
          `it is not something this library writes under ${HISTORY_DIR}; an operator may remove it`,
      });
    }
  }
  return keys.sort();
}

// The identities of the staged files in the store's directory that have another name: the
// evidence that a version above a key's tip is a write cut short.
function stagedFiles(root: string): Set<string> {
  const ids = new Set<string>();
  for (const { name } of listNames(root)) {
    if (keyOfTemp(name) === undefined) continue;
    const st = fs.lstatSync(`${root}/${name}`, { throwIfNoEntry: false });
    if (st?.isFile() && st.nlink >= 2) ids.add(`${st.dev}:${st.ino}`);
  }
  return ids;
}

// Runs `fn` with the history directory open (undefined when there is none); one that is not a
// directory of ours is reported, as the only problem, with nothing listed.
function withHistory<T extends Listed<Version> | Evidence | Entry>(
  h: HistoryRoot,
  fn: (hd: Dir | undefined) => T,
): T {
  let hd: Dir | undefined;
  try {
    hd = openDir(h.root, HISTORY_DIR);
  } catch (e) {
    if (!(e instanceof NotOurDir)) throw e;
    const problem: HistoryProblem = {
      key: HISTORY_DIR,
      problem: "foreign",
      reason:
        `${HISTORY_DIR} in the memory directory is ${e.what}, not a history directory this library made; an operator must remove it`,
    };
    const r = fn(undefined);
    return "problems" in r ? { ...r, problems: [...r.problems, problem] } : r;
  }
  try {
    return fn(hd);
  } finally {
    hd?.close();
  }
}

function withKeyDir<T>(hd: Dir | undefined, key: string, fn: (kd: Dir) => T): T | undefined {
  if (hd === undefined) return undefined;
  const kd = openDir(hd, key);
  if (kd === undefined) return undefined;
  try {
    return fn(kd);
  } finally {
    kd.close();
  }
}
