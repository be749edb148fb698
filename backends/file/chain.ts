// One key's history as the disk holds it: its memory file (the head), its versions above the
// retention record, its pending delete, and what is wrong with them. Read without a lock: a write
// that lands meanwhile is above what was read, or left out. The rules (docs/design/history.md):
//
// - The committed tip is the head's version; with no head, the newest version that is not a write
//   cut short. A write cut short is a version above the tip whose staged file is still in the
//   store's directory (same inode: a writer flushes that name before it links the version);
//   without that evidence a version above the tip was committed, so the memory was rolled back
//   (`rolled_back`) or removed (`removed`) by hand.
// - The chain runs from the tip down by `prev`; versions at or below the retention record are
//   being removed and count for nothing.

import { existsSync } from "node:fs";
import { CorruptError } from "../../store/errors.ts";
import type { HistoryProblem } from "../../store/types.ts";
import type { ChainLink } from "../../store/backend.ts";
import { errorKind } from "../../store/text.ts";
import { GENESIS, hashMatches, splitVersion, type VersionRecord } from "./envelope.ts";
import type { Dir } from "./dirs.ts";
import { namesIn, NotOurDir, openDir } from "./dirs.ts";
import { close, fileIdOf } from "./fs.ts";
import { bytesOf, type FileFacts, headOf, openFile } from "./read.ts";
import { CUT_NAME, pendingDeleteName, seqOfName, SUFFIX, TEMP_SUFFIX } from "./names.ts";
import { type CutRecord, readCut } from "./cut.ts";

/** One version file as found. */
export interface Found {
  readonly seq: number;
  /** Its record; `undefined` when the file is damaged. */
  readonly record: VersionRecord | undefined;
  /** Its entry's description (none for a delete). */
  readonly description?: string | undefined;
  readonly facts: FileFacts;
  /** Where it is: in the key's history directory, the pending delete, or the head itself. */
  readonly place: "history" | "pending" | "head";
  /** With `verify`: whether its bytes match its hash. */
  readonly intact?: boolean | undefined;
}

/** What a key's memory file is. */
export type Head =
  | { readonly state: "absent" }
  | {
    readonly state: "present";
    /** Its record; `undefined` when it has none (written with history off) or it is damaged. */
    readonly record: VersionRecord | undefined;
    readonly damaged: boolean;
    readonly description: string | undefined;
    readonly facts: FileFacts;
    /** With `verify`: whether its bytes match its record's hash. */
    readonly intact?: boolean;
    /** This process may not read it. */
    readonly denied?: boolean;
  };

/** A key's history. */
export interface KeyHistory {
  readonly key: string;
  readonly head: Head;
  /** The newest committed version, when there is one. */
  readonly tip: VersionRecord | undefined;
  /** The versions of the key's chain, newest first (what `history()` lists). */
  readonly chain: Found[];
  /** The retention record (a cut record, or the key's expired record), when there is one. */
  readonly cut: (ChainLink & { readonly seq: number }) | undefined;
  /** Every kept version with a record, revision → hash (the evidence an anchor is checked on). */
  readonly hashes: Map<string, string>;
  /** What is wrong. */
  readonly problems: HistoryProblem[];
  /** How many kept versions are in chain format 1. */
  readonly format1: number;
  /** Whether its oldest kept version is a format 1 one cut before retention records existed. */
  readonly legacyCut: boolean;
}

/** How to read a key's history. */
export interface ReadKey {
  readonly root: string;
  /** The history directory, open (undefined: there is none). */
  readonly hd: Dir | undefined;
  /** The key's expired record, if it has one. */
  readonly expired?: (ChainLink & { readonly seq: number }) | undefined;
  /** Check every version's bytes against its hash (for check; slower). */
  readonly verify?: boolean;
  /**
   * The identities of the staged files in the store's directory (for check). Without it, a
   * version with a second name counts as a write cut short (what writers go by).
   */
  readonly temps?: ReadonlySet<string> | undefined;
  /**
   * The caller looked just before and found no memory file (a writer's look): the head is not
   * read again. Opening a name that is missing costs an error object, most of such a read.
   */
  readonly headAbsent?: boolean;
}

/** Reads `key`'s history. Never throws for what it finds: damage goes to `problems`. */
export function readKey(key: string, o: ReadKey): KeyHistory {
  const problems: HistoryProblem[] = [];
  const report = (problem: HistoryProblem["problem"], reason: string, revision?: number) =>
    problems.push({
      key,
      ...(revision === undefined ? {} : { revision: String(revision) }),
      problem,
      reason,
    });
  const head: Head = o.headAbsent === true
    ? { state: "absent" }
    : readHeadFile(`${o.root}/${key}${SUFFIX}`, { key, verify: o.verify === true });
  if (head.state === "present" && head.damaged) {
    report("damaged", "the memory file's version record is damaged");
  }
  if (head.state === "present" && head.intact === false) {
    report(
      "edited",
      "the memory file does not match its version's hash (edited by hand?)",
      head.record?.seq,
    );
  }
  const files = new Map<number, Found>();
  let cutFile: CutRecord | undefined;
  let kd: Dir | undefined;
  try {
    kd = o.hd === undefined ? undefined : openDir(o.hd, key);
  } catch (e) {
    if (!(e instanceof NotOurDir)) throw e;
    report("foreign", `${e.where} is ${e.what}, not a history directory this library made`);
  }
  if (kd !== undefined) {
    try {
      const cut = readCut(kd);
      if (cut === "damaged") report("damaged", "its retention record cannot be read");
      else cutFile = cut;
      for (const { name } of namesIn(kd)) {
        const seq = seqOfName(name);
        if (seq === undefined) {
          if (name !== CUT_NAME && !(name.startsWith(".") && name.endsWith(TEMP_SUFFIX))) {
            report("foreign", `${kd.where}/${name} is not something this library writes`);
          }
          continue;
        }
        const found = readVersionFile(kd.at(name), { key, seq, verify: o.verify === true });
        if (typeof found === "string") {
          if (found !== "") report("foreign", `${kd.where}/${name} is ${found}`, seq);
          continue;
        }
        files.set(seq, found);
      }
    } finally {
      kd.close();
    }
  }
  const cut = newestCut(cutFile, o.expired);
  const cutSeq = cut?.seq ?? 0;
  // The pending delete beside the head: a version of its own where the history has none yet.
  const pending = readVersionFile(`${o.root}/${pendingDeleteName(key)}`, {
    key,
    seq: 0,
    verify: o.verify === true,
    place: "pending",
  });
  const pendingId = typeof pending === "string" ? undefined : pending.facts.id;
  if (typeof pending !== "string" && pending.record !== undefined) {
    const seq = pending.record.seq;
    if (seq > cutSeq && !files.has(seq)) files.set(seq, { ...pending, seq });
  }
  const kept = [...files.values()].filter((f) => f.seq > cutSeq).sort((a, b) => a.seq - b.seq);
  for (const f of kept) {
    if (f.record === undefined) report("damaged", "its version record is damaged", f.seq);
    else if (f.record.seq !== f.seq) {
      report("edited", `its file holds the record of version ${f.record.seq} (reordered?)`, f.seq);
    } else if (o.verify === true && f.intact !== true) {
      report("edited", "the version's bytes do not match its hash (edited by hand?)", f.seq);
    }
  }
  const good = kept.filter((f) => f.record !== undefined && f.record.seq === f.seq);
  const present = head.state === "present";
  const headId = present ? head.facts.id : undefined;
  const cutShort = (f: Found) =>
    f.facts.id !== headId &&
    (o.temps !== undefined
      ? o.temps.has(f.facts.id) || (present && f.facts.id === pendingId)
      : f.facts.nlink >= 2 && (present || f.facts.id !== pendingId));
  // The committed tip.
  let tip: VersionRecord | undefined;
  let tipFound: Found | undefined;
  if (present && head.record !== undefined) {
    tip = head.record;
    const own = files.get(tip.seq);
    // A file under the head's sequence that is not the head: what a killed writer linked above an
    // older head, kept by a cut that lost the link of the head that replaced it. The head is the
    // version; anything else there was edited.
    if (
      own !== undefined && own.facts.id !== head.facts.id && o.verify === true &&
      !(own.record?.prev === tip.prev && own.intact === true)
    ) report("edited", "its version file holds other bytes than the memory", tip.seq);
    tipFound = {
      seq: tip.seq,
      record: tip,
      description: head.description,
      facts: head.facts,
      place: "head",
    };
    // Versions of an older format above the head are older writers' leftovers: they left no
    // evidence to tell.
    const above = good.filter((f) => f.seq > tip!.seq && !cutShort(f) && f.record!.format === 2);
    if (above.length > 0) {
      report(
        "rolled_back",
        `the memory holds version ${tip.seq}, but ${
          span(above)
        } came after it (rolled back by hand?)`,
        above[0]!.seq,
      );
    }
  } else {
    for (let i = good.length - 1; i >= 0; i--) {
      if (!cutShort(good[i]!)) {
        tipFound = good[i]!;
        break;
      }
    }
    tip = tipFound?.record;
    const damagedAbove = kept.some((f) => f.record === undefined && f.seq > (tip?.seq ?? 0));
    if (!present && tip !== undefined && tip.op !== "delete" && !damagedAbove) {
      report(
        "removed",
        `its memory file is gone, but no delete follows version ${tip.seq} (removed by hand?)`,
        tip.seq,
      );
    }
    if (present && head.record === undefined && !head.damaged && head.denied !== true) {
      report(
        "unrecorded",
        "the memory holds an entry no version records (written with history off, or edited by hand)",
      );
    }
  }
  const bad = new Set(kept.filter((f) => !good.includes(f)).map((f) => f.seq));
  const chain = walk({ tipFound, good, bad, cut, report, cutShort });
  const hashes = new Map<string, string>();
  for (const f of good) hashes.set(String(f.seq), f.record!.hash);
  if (tip !== undefined) hashes.set(String(tip.seq), tip.hash);
  const bottom = chain.at(-1);
  return {
    key,
    head,
    tip,
    chain,
    cut,
    hashes,
    problems,
    format1: good.filter((f) => f.record!.format === 1).length,
    legacyCut: bottom !== undefined && bottom.record!.format === 1 && cut === undefined &&
      bottom.seq > 1,
  };
}

// The chain from the tip down, reporting what breaks it.
function walk(
  w: {
    tipFound: Found | undefined;
    good: Found[];
    /** Kept sequences whose file is damaged or holds another's record. */
    bad: ReadonlySet<number>;
    /** Whether a version is a write cut short (its staged file is still there). */
    cutShort: (f: Found) => boolean;
    cut: (ChainLink & { seq: number }) | undefined;
    report: (problem: HistoryProblem["problem"], reason: string, revision?: number) => void;
  },
): Found[] {
  const chain: Found[] = [];
  if (w.tipFound === undefined) return chain;
  const cutSeq = w.cut?.seq ?? 0;
  const bySeq = new Map(w.good.map((f) => [f.seq, f]));
  let cur = w.tipFound;
  chain.push(cur);
  while (cur.seq - 1 > cutSeq) {
    const want = cur.record!.prev;
    const below = bySeq.get(cur.seq - 1);
    if (below !== undefined && below.record!.hash === want) {
      checkOps(cur, { older: below, report: w.report });
      chain.push(cur = below);
      continue;
    }
    const lower = w.good.filter((f) => f.seq < cur.seq - 1).reverse();
    const jump = lower.find((f) => f.record!.hash === want);
    if (jump !== undefined) {
      // Written over versions a rollback had left above the memory: they are not in the chain.
      // (Damaged ones between are reported as such, and tell nothing.)
      const between = w.good.filter((f) => f.seq > jump.seq && f.seq < cur.seq);
      const over = between.filter((f) => !w.cutShort(f));
      if (over.length > 0) {
        w.report(
          "rolled_back",
          `version ${cur.seq} was written over version ${jump.seq}: ${
            span(over)
          } had been rolled back by hand`,
          over[0]!.seq,
        );
      }
      if (between.length === cur.seq - jump.seq - 1) {
        checkOps(cur, { older: jump, report: w.report });
      }
      chain.push(cur = jump);
      continue;
    }
    const next = below ?? lower[0];
    // Nothing kept below: the oldest versions are gone (the bottom check says how).
    if (next === undefined) break;
    // A damaged version between is reported as such; a gap or another chain is a version missing.
    if (!w.bad.has(cur.seq - 1)) {
      w.report(
        "missing",
        below !== undefined
          ? `version ${cur.seq} does not chain to version ${below.seq} before it (a version between is missing or was replaced)`
          : `version ${cur.seq} chains to a version that is gone (the next kept is ${next.seq})`,
        cur.seq - 1,
      );
    }
    chain.push(cur = next);
  }
  const bottom = cur;
  const start = w.cut?.hash ?? GENESIS;
  if (bottom.seq !== cutSeq + 1 || bottom.record!.prev !== start) {
    if (!(bottom.record!.format === 1 && w.cut === undefined)) {
      w.report(
        "truncated",
        w.cut === undefined
          ? `its oldest kept version ${bottom.seq} is not its first, and no retention record says where retention cut`
          : `its oldest kept version ${bottom.seq} does not chain to the retention record (cut at ${w.cut.seq})`,
        bottom.seq,
      );
    }
  }
  return chain;
}

// A create must follow a delete (or nothing): one that follows a memory means it was removed
// around the library in between.
function checkOps(
  newer: Found,
  o: {
    older: Found;
    report: (problem: HistoryProblem["problem"], reason: string, revision?: number) => void;
  },
): void {
  const { older, report } = o;
  if (newer.record!.op === "create" && older.record!.op !== "delete") {
    report(
      "removed",
      `version ${newer.seq} creates it again after version ${older.seq}, which is not a delete (removed by hand in between?)`,
      newer.seq,
    );
  }
}

function span(fs: readonly Found[]): string {
  if (fs.length === 1) return `version ${fs[0]!.seq}`;
  return `versions ${fs[0]!.seq} to ${fs.at(-1)!.seq}`;
}

function newestCut(
  file: CutRecord | undefined,
  expired: (ChainLink & { seq: number }) | undefined,
): (ChainLink & { seq: number }) | undefined {
  const a = file === undefined
    ? undefined
    : { seq: file.seq, revision: String(file.seq), hash: file.hash };
  if (a === undefined) return expired;
  if (expired === undefined) return a;
  return expired.seq > a.seq ? expired : a;
}

/**
 * Reads one version file: what it holds, or what is there instead in words ("" when nothing).
 * With `verify`, its bytes are checked against its hash (`intact`).
 */
export function readVersionFile(
  path: string,
  o: { key: string; seq: number; verify: boolean; place?: Found["place"] },
): Found | string {
  if (o.place === "pending" && !existsSync(path)) return "";
  const opened = openFile(path);
  // One this process may not read shares its memory file's permissions (it is the same file):
  // nothing to go by.
  if ("absent" in opened || "denied" in opened) return "";
  if ("other" in opened) return opened.other;
  const { fd, facts } = opened;
  try {
    const place = o.place ?? "history";
    if (!o.verify) {
      const h = headOf(fd, { key: o.key });
      if (h === undefined || h.record === undefined) {
        return { seq: o.seq, record: undefined, facts, place };
      }
      return { seq: o.seq, record: h.record, description: h.description, facts, place };
    }
    const bytes = bytesOf(fd);
    if (bytes === undefined) return { seq: o.seq, record: undefined, facts, place };
    let split;
    try {
      split = splitVersion(bytes);
    } catch {
      return { seq: o.seq, record: undefined, facts, place };
    }
    if (split.record === undefined) return { seq: o.seq, record: undefined, facts, place };
    const intact = hashMatches({ key: o.key, record: split.record }, split.entry);
    return { seq: o.seq, record: split.record, facts, place, intact };
  } finally {
    close(fd);
  }
}

function readHeadFile(path: string, o: { key: string; verify: boolean }): Head {
  const { key, verify } = o;
  const opened = openFile(path);
  if ("denied" in opened) {
    // Unreadable here: a head without a record this process can use.
    const id = fileIdOf(path);
    return id === undefined ? { state: "absent" } : {
      state: "present",
      record: undefined,
      damaged: false,
      description: undefined,
      facts: { id, nlink: 1 },
      denied: true,
    };
  }
  if (!("fd" in opened)) return { state: "absent" };
  const { fd, facts } = opened;
  try {
    if (!verify) {
      const h = headOf(fd, { key });
      return {
        state: "present",
        record: h?.record,
        damaged: h?.damaged === true,
        description: h?.description,
        facts,
      };
    }
    const bytes = bytesOf(fd);
    if (bytes === undefined) {
      return { state: "present", record: undefined, damaged: false, description: undefined, facts };
    }
    try {
      const split = splitVersion(bytes);
      const h = split.record === undefined ? undefined : split.record;
      return {
        state: "present",
        record: h,
        damaged: false,
        description: undefined,
        facts,
        ...(h === undefined ? {} : { intact: hashMatches({ key, record: h }, split.entry) }),
      };
    } catch {
      return { state: "present", record: undefined, damaged: true, description: undefined, facts };
    }
  } catch (e) {
    if (e instanceof CorruptError || errorKind(e) === "EISDIR") {
      return { state: "present", record: undefined, damaged: true, description: undefined, facts };
    }
    throw e;
  } finally {
    close(fd);
  }
}
