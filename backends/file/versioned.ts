// The file backend's writes with history on. Every write (create, update, delete, and a restore's
// or revert's revision-checked write) is one new version:
//
// 1. Look at the key's tip (its head's record, or with no head its newest delete) and stage the
//    new file: its record line (next sequence, the tip's hash as `prev`, the call's provenance)
//    then the entry; flush it. A delete stages its record line alone.
// 2. Under the key's lock, check the tip is still what step 1 saw (else start over, or for a
//    revision-checked write answer stale), then link the staged file into
//    `.history/<key>/<seq>.md` and put it in place: `link` for a create (exactly one creator
//    wins), `rename` for an update, and for a delete, flush the version's directory, then remove
//    the head.
// 3. Flush the directories, then acknowledge.
//
// A writer killed anywhere leaves history and head in agreement: before the head changes, the
// version file is above the head's sequence and counts for nothing (history.ts); once the head
// changed, the version is the head's own bytes. A delete's version is flushed before the head
// goes, so a power cut cannot keep the removal without its version either.

import { CapacityError, CorruptError, StaleError, UnavailableError } from "../../store/errors.ts";
import type { HistoryRetention } from "../../store/types.ts";
import { serializeValid } from "../../store/serialize.ts";
import type { ValidWrite } from "../../store/validate.ts";
import { abortCheck } from "../../store/build.ts";
import type { Call } from "../../store/backend.ts";
import { errorKind, quote } from "../../store/text.ts";
import type { Reservation } from "./count.ts";
import { DirSync } from "./dir_sync.ts";
import { encodeVersion, GENESIS, type VersionRecord } from "./envelope.ts";
import {
  identityOf,
  type Kind,
  kindOf,
  kindOfQuick,
  link,
  makeSubdir,
  remove,
  removeQuietly,
  rename,
} from "./fs.ts";
import { HISTORY_DIR, keyDir, prune, type Tip, tipOf, versionPath } from "./history.ts";
import { acquire, type HeldLock, lockPath, release } from "./lock.ts";
import { SUFFIX } from "./names.ts";
import { readCurrent, splitFile } from "./read.ts";
import { revisionOf } from "./revision.ts";
import { churn, exists, occupied, stale } from "./refusals.ts";

// A key that changes this often between a look and a write is reported as unavailable.
const MAX_ATTEMPTS = 8;
// Pruning reads the key's directory: every so many versions is enough.
const PRUNE_EVERY = 8;
const DIR_MODE = 0o700;
const ENCODER = new TextEncoder();
const NOTHING = new Uint8Array(0);

/** What the writes need from the backend that owns them. */
export interface Mechanics {
  readonly root: string;
  readonly durable: boolean;
  readonly retention: HistoryRetention;
  /** Writes `bytes` to a new flushed temp file; `meanwhile` runs while it flushes. */
  stage(key: string, bytes: Uint8Array, meanwhile?: () => void): Promise<string>;
  /** Marks a create's start for the capacity check. */
  beginCreate(): number;
  /** Marks a create's end. */
  endCreate(): void;
  /** Claims a capacity slot, or throws `CapacityError` (`ExistsError` for a key that exists). */
  reserve(started: number, key: string, path: string): Reservation;
  /** Flushes the store's directory (group commit). */
  flushRoot(): Promise<void>;
  /** Records the revision of the written entry's bytes in the call's scope. */
  record(call: Call, key: string, entry: Uint8Array): void;
}

/** What a write asks of the key before it writes. */
export type Rule =
  /** `create`: the key must hold nothing. */
  | { readonly kind: "create" }
  /** `update` without revision checks: replace, or create a key that holds nothing. */
  | { readonly kind: "replace" }
  /** `update` with revision checks: the key must hold exactly what the scope read. */
  | { readonly kind: "checked"; readonly seen: number }
  /**
   * `delete`: remove the key if it holds something; false when it holds nothing. With `seen` (a
   * revision-checked delete, store/checked.ts), only if it holds exactly what the scope read.
   */
  | { readonly kind: "delete"; readonly seen?: number | undefined }
  /** A restore's or revert's write: the key's newest version must be `expected`. */
  | { readonly kind: "expect"; readonly expected: string | null };

/** The outcome of one versioned write. */
export interface Written {
  /** The new version's sequence; 0 when nothing was written (a delete of nothing). */
  readonly seq: number;
}

/** The versioned writes of one file store. */
export class VersionedWriter {
  readonly #m: Mechanics;
  // One group commit per key directory (and one for the history directory itself).
  readonly #dirSyncs = new Map<string, DirSync>();

  constructor(mechanics: Mechanics) {
    this.#m = mechanics;
  }

  /** Writes `w` (or deletes, when `null`) as a new version of `key`, following `rule`. */
  async write(key: string, w: ValidWrite | null, rule: Rule, call: Call): Promise<Written> {
    const path = `${this.#m.root}/${key}${SUFFIX}`;
    const entry = w === null ? NOTHING : ENCODER.encode(serializeValid(w.description, w.content));
    for (let attempt = 1;; attempt++) {
      // The first try stages before it locks, so the lock is held for microseconds; a key others
      // keep writing meanwhile is then written holding the lock from the look on, which always
      // makes progress.
      const held = attempt === 1 ? undefined : await this.#lock(key, call);
      try {
        const r = await this.#attempt(key, path, w, entry, rule, call, held);
        if (r !== "retry") return r;
      } finally {
        if (held !== undefined) release(held);
      }
      if (attempt >= MAX_ATTEMPTS || call.signal?.aborted) throw churn(key);
    }
  }

  #lock(key: string, call: Call): Promise<HeldLock> {
    return acquire(lockPath(this.#m.root, key), key, call.signal);
  }

  // One try of a write; `held`: the key's lock, when the try holds it throughout.
  async #attempt(
    key: string,
    path: string,
    w: ValidWrite | null,
    entry: Uint8Array,
    rule: Rule,
    call: Call,
    held: HeldLock | undefined,
  ): Promise<Written | "retry"> {
    const { root } = this.#m;
    const seen = this.#look(key, path, rule);
    const verdict = judge(key, rule, seen);
    if (verdict === "nothing") return { seq: 0 };
    if (seen.tip.headExists && seen.tip.head === undefined && seen.head !== undefined) {
      // A head written with history off: record it as a version first, so it can be restored.
      await this.#adopt(key, path, seen, call, held);
      return "retry";
    }
    const op = w === null ? "delete" : seen.tip.headExists ? "update" : "create";
    const seq = seen.tip.maxSeq + 1;
    const { bytes } = encodeVersion(key, {
      seq,
      op,
      at: new Date().toISOString(),
      run: call.scope?.run,
      actor: call.scope?.actor,
      via: call.via,
      callId: call.callId,
      tainted: call.scope?.tainted ?? false,
      prev: seen.tip.committed?.hash ?? GENESIS,
    }, entry);
    const done = op === "create"
      ? await this.#create(key, path, seq, bytes, seen, rule, call, held)
      : await this.#replaceOrRemove(key, path, seq, bytes, op, seen, rule, call, held);
    if (done === "retry") return "retry";
    await Promise.all([
      this.#flush(keyDir(root, key)),
      this.#m.flushRoot(),
      done === "made" ? this.#flush(`${root}/${HISTORY_DIR}`) : undefined,
    ]);
    if (op !== "delete") this.#m.record(call, key, entry);
    if (seq % PRUNE_EVERY === 0) prune(root, key, this.#m.retention, seq);
    return { seq };
  }

  // The key's tip and head bytes (copied: the read buffer is shared), unlocked. A create of a
  // key that holds a file needs no more than a stat to refuse.
  #look(key: string, path: string, rule: Rule): Seen {
    // A stat that fails (the directory replaced by a file, say) fails the call; a create may
    // use the cheap look, since `link` is the arbiter and fails safely.
    const kind = rule.kind === "create" ? kindOfQuick(path) : kindOf(path);
    if (kind !== null && kind !== "file") return { kind, head: undefined, tip: NO_TIP };
    if (kind === "file" && rule.kind === "create") throw exists(key);
    // Taken before the read: a head replaced meanwhile reads as another file under the lock.
    const id = kind === null ? null : identityOf(path);
    let head: Uint8Array | undefined;
    let unreadable: unknown;
    try {
      head = readCurrent(path, key)?.slice();
    } catch (e) {
      if (e instanceof CorruptError) throw e;
      unreadable = e;
    }
    try {
      const tip = tipOf(this.#m.root, key, unreadable === undefined ? head : null);
      return { kind, head, tip, unreadable, id };
    } catch (e) {
      if (!(e instanceof CorruptError) || head === undefined) throw e;
      // A head whose record line is damaged: the history says what is committed; the next write
      // replaces the damaged head as it would a damaged entry.
      return { kind, head: undefined, tip: tipOf(this.#m.root, key, null), unreadable: e };
    }
  }

  // A look under the lock: what the first look saw, when the head (with its record) is still the
  // very file it read; else a look again, where an ExistsError for a create means the key filled
  // meanwhile.
  #lookLocked(key: string, path: string, rule: Rule, seen: Seen): Seen {
    if (seen.tip.head !== undefined && seen.id != null && identityOf(path) === seen.id) return seen;
    return this.#look(key, path, rule.kind === "create" ? { kind: "replace" } : rule);
  }

  async #create(
    key: string,
    path: string,
    seq: number,
    bytes: Uint8Array,
    seen: Seen,
    rule: Rule,
    call: Call,
    held: HeldLock | undefined,
  ): Promise<"done" | "made" | "retry"> {
    const started = this.#m.beginCreate();
    let slot: Reservation | undefined;
    let temp: string | undefined;
    try {
      temp = await this.#m.stage(key, bytes, () => {
        slot = this.#m.reserve(started, key, path);
      });
      slot ??= this.#m.reserve(started, key, path);
      const lock = held ?? await this.#lock(key, call);
      try {
        const now = this.#lookLocked(key, path, rule, seen);
        if (!sameTip(seen.tip, now.tip)) {
          // Someone wrote meanwhile: a create whose key now holds something says so.
          if (now.tip.headExists) judge(key, rule, now);
          return "retry";
        }
        abortCheck("file", "create", key, call.signal);
        const made = this.#linkVersion(key, temp, seq);
        try {
          link(temp, path);
        } catch (e) {
          removeQuietly(versionPath(this.#m.root, key, seq));
          // A writer with history off created it without the lock.
          // Gone again by now: a delete without the lock came in between, so the key held a
          // memory when the link ran; only a name still taken by something else is not one.
          if (errorKind(e) === "EEXIST") {
            const now = kindOf(path);
            throw now === "file" || now === null ? exists(key) : occupied("create", key);
          }
          throw e;
        }
        slot.linked();
        slot = undefined;
        return made ? "made" : "done";
      } finally {
        if (held === undefined) release(lock);
      }
    } catch (e) {
      if (e instanceof CapacityError && kindOf(path) === "file") throw exists(key);
      throw e;
    } finally {
      slot?.released();
      if (temp !== undefined) removeQuietly(temp);
      this.#m.endCreate();
    }
  }

  async #replaceOrRemove(
    key: string,
    path: string,
    seq: number,
    bytes: Uint8Array,
    op: "update" | "delete",
    seen: Seen,
    rule: Rule,
    call: Call,
    held: HeldLock | undefined,
  ): Promise<"done" | "made" | "retry"> {
    return await this.#underLock(key, bytes, call, held, async (temp, placed) => {
      const now = this.#lookLocked(key, path, rule, seen);
      if (!sameTip(seen.tip, now.tip)) {
        // A revision-checked write that lost the race is stale; the others look again.
        judge(key, rule, now);
        if (rule.kind === "checked") {
          throw stale(key, "it changed since this run read it; read it again, then update");
        }
        if (rule.kind === "delete" && rule.seen !== undefined) {
          throw stale(
            key,
            "it changed since this run read it; read it again, then delete",
            "delete",
          );
        }
        return "retry";
      }
      abortCheck("file", op, key, call.signal);
      const made = this.#linkVersion(key, temp, seq);
      if (now.tip.head !== undefined && relinkHead(path, this.#m.root, key, now.tip.head.seq)) {
        // On disk before the head moves on: a second cut could otherwise lose that version.
        if (this.#m.durable) await this.#flush(keyDir(this.#m.root, key));
      }
      if (op === "update") {
        rename(temp, path);
        placed();
      } else {
        // The delete's version is on disk before the head goes (see the top of this file).
        if (this.#m.durable) await this.#flush(keyDir(this.#m.root, key));
        remove(path);
      }
      return made ? "made" : "done";
    });
  }

  // Stages `bytes`, then runs `step` under the key's lock (or the one the caller holds); the
  // staged file is removed afterwards unless `step` said it placed it.
  async #underLock<T>(
    key: string,
    bytes: Uint8Array,
    call: Call,
    held: HeldLock | undefined,
    step: (temp: string, placed: () => void) => T | Promise<T>,
  ): Promise<T> {
    const temp = await this.#m.stage(key, bytes);
    let placed = false;
    try {
      const lock = held ?? await this.#lock(key, call);
      try {
        return await step(temp, () => placed = true);
      } finally {
        if (held === undefined) release(lock);
      }
    } finally {
      if (!placed) removeQuietly(temp);
    }
  }

  // Records a head that has no version record (written with history off) as a version of its
  // own, `via: "unrecorded"`, dated by its file's time, so the write about to replace it keeps it.
  async #adopt(
    key: string,
    path: string,
    seen: Seen,
    call: Call,
    held: HeldLock | undefined,
  ): Promise<void> {
    const head = seen.head!;
    const seq = seen.tip.maxSeq + 1;
    const { bytes } = encodeVersion(key, {
      seq,
      op: seen.tip.committed === undefined ? "create" : "update",
      at: new Date().toISOString(),
      via: "unrecorded",
      tainted: false,
      prev: seen.tip.committed?.hash ?? GENESIS,
    }, head);
    const madeDirs = await this.#underLock(key, bytes, call, held, (temp, placed) => {
      const now = this.#lookLocked(key, path, { kind: "replace" }, seen);
      if (!sameTip(seen.tip, now.tip)) return undefined;
      const made = this.#linkVersion(key, temp, seq);
      // The same entry bytes, now with their record: what the head holds does not change.
      rename(temp, path);
      placed();
      return made;
    });
    if (madeDirs === undefined) return;
    await Promise.all([
      this.#flush(keyDir(this.#m.root, key)),
      this.#m.flushRoot(),
      madeDirs ? this.#flush(`${this.#m.root}/${HISTORY_DIR}`) : undefined,
    ]);
  }

  // Links the staged file as version `seq` of `key`, making its directory when missing; true when
  // it made a directory (whose parent then needs a flush). The directories are looked at on every
  // write, never remembered: one swapped for a link meanwhile is refused, never written through.
  #linkVersion(key: string, temp: string, seq: number): boolean {
    const made = this.#ensureKeyDir(key);
    linkVersion(temp, versionPath(this.#m.root, key, seq));
    return made;
  }

  // Makes `.history/<key>/` when missing; true when it made anything (whose parent then needs a
  // flush). Something that is not a directory under those names is never written through.
  #ensureKeyDir(key: string): boolean {
    const { root } = this.#m;
    let made = false;
    for (const dir of [`${root}/${HISTORY_DIR}`, keyDir(root, key)]) {
      const kind = kindOf(dir);
      if (kind === "dir") continue;
      if (kind !== null) throw notADirectory(key, dir === keyDir(root, key));
      // Never a missing store directory: that is the operator's (mkdir of its parent fails).
      if (makeSubdir(dir, DIR_MODE)) made = true;
      if (kindOf(dir) !== "dir") throw notADirectory(key, dir === keyDir(root, key));
    }
    return made;
  }

  #flush(dir: string): Promise<void> {
    if (!this.#m.durable) return Promise.resolve();
    let sync = this.#dirSyncs.get(dir);
    if (sync === undefined) {
      // Bounded: a store of 1,024 keys, and a few deleted ones, fits easily.
      if (this.#dirSyncs.size >= 4096) this.#dirSyncs.clear();
      this.#dirSyncs.set(dir, sync = new DirSync(dir));
    }
    return sync.flush();
  }
}

/** What a writer saw of a key: what is under its name, its head's bytes and its tip. */
interface Seen {
  readonly kind: Kind;
  readonly head: Uint8Array | undefined;
  readonly tip: Tip;
  /** Why the head could not be used (unreadable, or a damaged record), when it could not. */
  readonly unreadable?: unknown;
  /** Which file the head was when it was read (`identityOf`). */
  readonly id?: string | null;
}

const NO_TIP: Tip = { head: undefined, headExists: false, committed: undefined, maxSeq: 0 };

// Whether a write may go ahead on what it saw: throws the refusal, or "nothing" for a delete of
// a key that holds nothing.
function judge(key: string, rule: Rule, seen: Seen): "write" | "nothing" {
  const { tip } = seen;
  if (seen.kind !== null && seen.kind !== "file") {
    // Not a memory: left alone by every write.
    if (rule.kind === "delete") return "nothing";
    throw occupied(rule.kind === "create" ? "create" : "update", key);
  }
  switch (rule.kind) {
    case "create":
      if (tip.headExists) throw exists(key);
      return "write";
    case "replace":
      return "write";
    case "delete":
      if (rule.seen === undefined) return tip.headExists ? "write" : "nothing";
      return judgeSeen(key, rule.seen, seen, "delete");
    case "checked":
      return judgeSeen(key, rule.seen, seen, "update");
    case "expect": {
      if (seen.unreadable !== undefined) throw seen.unreadable;
      const newest = tip.committed === undefined ? null : String(tip.committed.seq);
      if (newest !== rule.expected || (tip.headExists && tip.head === undefined)) {
        throw new StaleError(
          `[memory:file] Cannot write memory ${
            quote(key)
          }: it was written since its history was read; read it again`,
          { key },
        );
      }
      return "write";
    }
  }
}

// A revision-checked write: the key must hold exactly what the scope read.
function judgeSeen(key: string, revision: number, seen: Seen, op: "update" | "delete"): "write" {
  if (seen.unreadable !== undefined) throw seen.unreadable;
  if (seen.head === undefined) {
    throw stale(key, `it was deleted since this run read it; read it again, then ${op}`, op);
  }
  if (revisionOf(splitFile(seen.head, key).entry) !== revision) {
    throw stale(key, `it changed since this run read it; read it again, then ${op}`, op);
  }
  return "write";
}

function sameTip(a: Tip, b: Tip): boolean {
  return a.headExists === b.headExists && a.head?.hash === b.head?.hash &&
    a.committed?.hash === b.committed?.hash && a.maxSeq === b.maxSeq;
}

// Links a staged file as a version. A file already under that name is what a killed writer left
// above the head (the lock is held, and the tip was just checked): it is replaced.
function linkVersion(temp: string, to: string): void {
  try {
    link(temp, to);
  } catch (e) {
    if (errorKind(e) !== "EEXIST") throw e;
    removeQuietly(to);
    link(temp, to);
  }
}

// A power cut can keep a head's rename without its link into the history (the two directories
// are flushed apart): the head is that version (history.ts reads it so), so before the next
// version goes on top it is linked back, and the chain keeps no gap. Another file under its
// sequence is what a killed writer left above an older head, kept by the cut that lost the head's
// link: it counts for nothing and is replaced. True when it linked.
// Two lstats on the common path (the link is there): no failed link and no error object per write.
function relinkHead(path: string, root: string, key: string, seq: number): boolean {
  const to = versionPath(root, key, seq);
  if (identityOf(to) === identityOf(path)) return false;
  linkVersion(path, to);
  return true;
}

function notADirectory(key: string, keyLevel: boolean): UnavailableError {
  return new UnavailableError(
    `[memory:file] Cannot write memory ${quote(key)}: ${
      keyLevel ? `its entry under ${HISTORY_DIR}` : HISTORY_DIR
    } in the memory directory is not a directory; an operator must remove it`,
    { key },
  );
}

export type { VersionRecord };
