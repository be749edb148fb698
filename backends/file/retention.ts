// Retention on the file backend (the rule is store/retention.ts's): a key's oldest versions are
// cut in chain order, never by a clock's order, and every cut leaves its record first (cut.ts).
// - `prune`: at a key's write, every few versions, under its lock; it reads only the versions
//   it may cut (from the record up), never the whole directory.
// - `RetentionSweep`: deleted keys get no more writes, so each handle walks the history directory
//   a few names at a time (at open and every so many writes, from where the last walk stopped) and
//   expires whole a key deleted more than `days` ago: one line in `.history/.expired`, then its
//   versions go. Where the walk stopped is a hint, written every `HINT_EVERY` names walked and at
//   the walk's end, not at every step: each write of it cost a truncated file's blocks (about
//   260 µs, an eighth of that on every write), and a handle that stops short of it only leaves the
//   next handle a few names to walk again.

import * as fs from "node:fs";
import { cutCount } from "../../store/retention.ts";
import type { HistoryRetention } from "../../store/types.ts";
import { errorKind } from "../../store/text.ts";
import { type Dir, namesIn, openDir } from "./dirs.ts";
import { appendExpired, type ExpiredIndex, readCut, writeCut } from "./cut.ts";
import { readKey, readVersionFile } from "./chain.ts";
import { type HeldLock, lockPath, release, tryAcquire } from "./lock.ts";
import {
  HISTORY_DIR,
  legalKey,
  pendingDeleteName,
  seqOfName,
  SWEPT_NAME,
  versionName,
} from "./names.ts";
import type { VersionRecord } from "./envelope.ts";
import { removeIfSame } from "./fs.ts";

// How long housekeeping waits for a key's lock before it leaves the key for the next time.
const LOCK_TRY_MS = 100;
// The most versions one prune cuts (the next one goes on).
const MAX_CUT = 256;

/**
 * Cuts what retention lets go of a key's oldest versions (`top`: its newest). Best effort: a
 * damaged or missing version stops the cut there, for check to report.
 */
export async function prune(
  kd: Dir,
  p: { readonly key: string; readonly retention: HistoryRetention; readonly top: number },
): Promise<void> {
  try {
    const record = readCut(kd);
    if (record === "damaged") return;
    const cutSeq = record?.seq ?? 0;
    // What the last cut left on disk: its record is durable by now (writes since flushed it).
    if (record !== undefined) {
      for (let s = record.from; s <= record.seq; s++) unlinkQuietly(kd.at(versionName(s)));
    }
    const keepFrom = p.top - p.retention.versions + 1;
    const ats: number[] = [];
    const hashes: string[] = [];
    let prev = record?.hash;
    const cutoff = Date.now() - p.retention.days * DAY_MS;
    for (let s = cutSeq + 1; s < keepFrom && ats.length < MAX_CUT; s++) {
      const f = readVersionFile(kd.at(versionName(s)), { key: p.key, seq: s, verify: false });
      if (typeof f === "string" || f.record?.seq !== s) break;
      if (prev !== undefined && f.record.prev !== prev) break;
      const at = Date.parse(f.record.at);
      // The oldest run only: one that must stay ends it (reading on would cost, not cut).
      if (p.retention.days > 0 && !(at < cutoff)) break;
      prev = f.record.hash;
      ats.push(at);
      hashes.push(f.record.hash);
    }
    const n = cutCount(p.retention, {
      ats: [...ats, ...new Array(p.retention.versions).fill(Infinity)],
      deleted: false,
      now: Date.now(),
    });
    if (n === 0) return;
    await writeCut(kd, { seq: cutSeq + n, hash: hashes[n - 1]!, from: cutSeq + 1 });
  } catch {
    // Housekeeping: the next prune tries again.
  }
}

const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_REMEMBERED = 100_000;

// The record of a key's newest version (by the names in its directory, then one read), or of its
// delete still beside the head.
function newestRecord(hd: Dir, key: string): VersionRecord | undefined {
  const kd = openDir(hd, key);
  if (kd === undefined) return undefined;
  try {
    let top = 0;
    for (const { name } of namesIn(kd)) top = Math.max(top, seqOfName(name) ?? 0);
    if (top === 0) return undefined;
    const f = readVersionFile(kd.at(versionName(top)), { key, seq: top, verify: false });
    return typeof f === "string" ? undefined : f.record;
  } finally {
    kd.close();
  }
}

/** How many names a walk looks at: at open, and every `SWEEP_EVERY` writes. */
const OPEN_BUDGET = 64;
const WRITE_BUDGET = 8;
const SWEEP_EVERY = 8;
/** How many names a walk goes between two writes of where it stopped. */
const HINT_EVERY = 64;

/** One handle's walk over the history directory, expiring deleted keys whole. */
export class RetentionSweep {
  readonly #root: string;
  readonly #retention: HistoryRetention;
  readonly #expired: ExpiredIndex;
  #names: string[] | undefined;
  #at = 0;
  // Names walked since where the walk stopped was last written.
  #unhinted = 0;
  #writes = 0;
  #running = false;
  // Keys seen not due, and when they may be.
  readonly #notBefore = new Map<string, number>();

  constructor(o: { root: string; retention: HistoryRetention; expired: ExpiredIndex }) {
    this.#root = o.root;
    this.#retention = o.retention;
    this.#expired = o.expired;
  }

  /** At open. */
  opened(): Promise<void> {
    return this.#step(OPEN_BUDGET);
  }

  /** After a write. */
  wrote(): Promise<void> {
    return ++this.#writes % SWEEP_EVERY === 0 ? this.#step(WRITE_BUDGET) : Promise.resolve();
  }

  async #step(budget: number): Promise<void> {
    if (this.#retention.days <= 0 || this.#running) return;
    this.#running = true;
    let hd: Dir | undefined;
    try {
      hd = openDir(this.#root, HISTORY_DIR);
      if (hd === undefined) return;
      const names = this.#next(hd, budget);
      const due: string[] = [];
      for (const key of names) if (this.#due(hd, key)) due.push(key);
      if (due.length > 0) await this.#expire(hd, due);
    } catch {
      // Housekeeping: the next walk tries again.
    } finally {
      hd?.close();
      this.#running = false;
    }
  }

  // The next `budget` key names of the walk, which starts where the last handle left it and
  // starts over at the end (at most once a step).
  #next(hd: Dir, budget: number): string[] {
    const out: string[] = [];
    for (let pass = 0; pass < 2 && out.length < budget; pass++) {
      if (this.#names === undefined || this.#at >= this.#names.length) {
        const all: string[] = [];
        for (const { name, isDir } of namesIn(hd)) {
          if (isDir && legalKey(name) !== undefined) all.push(name);
        }
        this.#names = all.sort();
        const from = pass === 0 ? readText(hd.at(SWEPT_NAME)) : undefined;
        this.#at = from === undefined || from === "" ? 0 : this.#names.findIndex((n) => n > from);
        if (this.#at < 0) this.#at = this.#names.length;
      }
      const more = this.#names.slice(this.#at, this.#at + budget - out.length);
      this.#at += more.length;
      out.push(...more.filter((n) => !out.includes(n)));
    }
    const last = out.at(-1);
    this.#unhinted += out.length;
    const end = this.#at >= this.#names!.length;
    if (last !== undefined && (end || this.#unhinted >= HINT_EVERY)) {
      writeText(hd.at(SWEPT_NAME), end ? "" : last);
      this.#unhinted = 0;
    }
    return out;
  }

  // Whether `key` was deleted more than `days` ago (and nothing is wrong in its history). A key
  // seen not due yet is not looked at again before it can be.
  #due(hd: Dir, key: string): boolean {
    if (fs.existsSync(`${this.#root}/${key}.md`)) {
      this.#notBefore.delete(key);
      return false;
    }
    const now = Date.now();
    if ((this.#notBefore.get(key) ?? 0) > now) return false;
    // The newest version decides; only a key whose newest is an old delete is read whole.
    const newest = newestRecord(hd, key);
    const at = newest === undefined ? NaN : Date.parse(newest.at);
    if (newest?.op !== "delete" || !(at < now - this.#retention.days * DAY_MS)) {
      const wait = newest?.op === "delete" ? at + this.#retention.days * DAY_MS : now + DAY_MS;
      this.#notBefore.set(key, Number.isNaN(wait) ? now + DAY_MS : wait);
      if (this.#notBefore.size > MAX_REMEMBERED) this.#notBefore.clear();
      return false;
    }
    const kh = readKey(key, {
      root: this.#root,
      hd,
      expired: this.#expired.read(hd).byKey.get(key),
    });
    if (kh.tip?.op !== "delete" || kh.problems.length > 0 || kh.chain.length === 0) return false;
    const ats = kh.chain.map((f) => Date.parse(f.record!.at)).reverse();
    return cutCount(this.#retention, { ats, deleted: true, now }) === ats.length;
  }

  // Under each key's lock, once more: its record in `.expired` (flushed), then its versions go.
  async #expire(hd: Dir, keys: string[]): Promise<void> {
    const held: { key: string; lock: HeldLock; seq: number; hash: string; id: string }[] = [];
    try {
      for (const key of keys) {
        const lock = await tryAcquire(lockPath(this.#root, key), { key, ms: LOCK_TRY_MS });
        if (lock === undefined) continue; // busy: the next walk tries again
        const expired = this.#expired.read(hd).byKey.get(key);
        const kh = readKey(key, { root: this.#root, hd, expired });
        const tip = kh.chain[0];
        if (!this.#due(hd, key) || tip === undefined) {
          release(lock);
          continue;
        }
        held.push({ key, lock, seq: tip.seq, hash: tip.record!.hash, id: tip.facts.id });
      }
      for (const h of held) await appendExpired(hd, { key: h.key, seq: h.seq, hash: h.hash });
      for (const h of held) {
        removeIfSame(`${this.#root}/${pendingDeleteName(h.key)}`, h.id);
        const kd = openDir(hd, h.key);
        if (kd === undefined) continue;
        try {
          for (const { name } of namesIn(kd)) unlinkQuietly(kd.at(name));
        } finally {
          kd.close();
        }
        try {
          fs.rmdirSync(hd.at(h.key));
        } catch {
          // Something new in it: left for check to name.
        }
      }
    } finally {
      for (const h of held) release(h.lock);
    }
  }
}

function unlinkQuietly(path: string): void {
  try {
    fs.unlinkSync(path);
  } catch (e) {
    if (errorKind(e) !== "ENOENT") throw e;
  }
}

function readText(path: string): string | undefined {
  try {
    const fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      const buf = new Uint8Array(256);
      const n = fs.readSync(fd, buf, 0, buf.length, 0);
      return new TextDecoder().decode(buf.subarray(0, n)).trim();
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

// The walk's place: a hint (a torn or lost one only restarts the walk), so it is not flushed.
function writeText(path: string, text: string): void {
  try {
    const fd = fs.openSync(
      path,
      fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW,
      0o600,
    );
    try {
      fs.writeSync(fd, text);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // A hint.
  }
}
