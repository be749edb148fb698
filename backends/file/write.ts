// The file backend's one write path: create, update, delete, and a restore's or revert's
// revision-checked write, with history on or off (a step that may be off, not a second path).
// Each write: look, stage the new file (its version record first, with history on) and flush it,
// take the key's lock where it needs one, look again, put it in place, flush the directories,
// release. The steps and why they are ordered so: docs/design/history.md.

import { ConfigError, StaleError } from "../../store/errors.ts";
import type { HistoryRetention } from "../../store/types.ts";
import { serializeValid } from "../../store/serialize.ts";
import type { ValidWrite } from "../../store/validate.ts";
import { abortCheck } from "../../store/build.ts";
import type { Call } from "../../store/backend.ts";
import { errorKind, quote } from "../../store/text.ts";
import type { CapacityCheck, Reservation } from "./count.ts";
import type { DirSync } from "./dir_sync.ts";
import { encodeVersion } from "./envelope.ts";
import { type Dir, syncOpenDir } from "./dirs.ts";
import {
  close,
  createWith,
  createWithAsync,
  fileIdOf,
  fileIdOfIdentity,
  fileIdOfStat,
  kindOf,
  kindOfQuick,
  link,
  lstatOf,
  remove,
  removeIfSame,
  removeQuietly,
  rename,
  syncData,
} from "./fs.ts";
import { acquire, type HeldLock, lockPath, release } from "./lock.ts";
import { HISTORY_DIR, pendingDeleteName, tempName, versionName } from "./names.ts";
import { splitFile } from "./read.ts";
import { revisionOf } from "./revision.ts";
import { selfToken } from "./process.ts";
import { churn, exists, occupied, stale } from "./refusals.ts";
import {
  historyDirs,
  look,
  type LookAt,
  refusal,
  reprobe,
  sameTip,
  type Seen,
  unchanged,
} from "./look.ts";
import type { ExpiredIndex } from "./cut.ts";
import { prune } from "./retention.ts";

// A key that changes this often between a look and a write is reported as unavailable.
const MAX_ATTEMPTS = 8;
// Retention looks at a key's oldest versions every so many of its versions.
const PRUNE_EVERY = 8;
const FILE_MODE = 0o600;
const ENCODER = new TextEncoder();
const NOTHING = new Uint8Array(0);

/** What a write asks of the key before it writes. */
export type Rule =
  /** `create`: the key must hold nothing. */
  | { readonly kind: "create" }
  /** `update` without revision checks: replace, or create a key that holds nothing. */
  | { readonly kind: "replace" }
  /** `update` with revision checks: the key must hold exactly what the scope read. */
  | { readonly kind: "checked"; readonly seen: number }
  /**
   * `delete`: remove the key if it holds something; nothing when it holds nothing. With `seen`
   * (a revision-checked delete), only if it holds exactly what the scope read.
   */
  | { readonly kind: "delete"; readonly seen?: number | undefined }
  /** A restore's or revert's write: the key's newest version must be `expected`. */
  | { readonly kind: "expect"; readonly expected: string | null };

/** One write: the key, what to write (`null` deletes), the rule, and the call. */
export interface WriteRequest {
  readonly key: string;
  readonly write: ValidWrite | null;
  readonly rule: Rule;
  readonly call: Call;
}

/** What a write did. */
export interface Written {
  /** Whether it wrote (false: a delete of a key that held nothing). */
  readonly done: boolean;
  /** The new version's sequence, with history on. */
  readonly seq: number;
}

/** How the store was opened, for its writes. */
export interface WriteConfig {
  readonly root: string;
  readonly durable: boolean;
  /** The scope namespace revisions are recorded under. */
  readonly ns: string;
  readonly readBeforeUpdate: boolean;
  /** What history keeps; `undefined` with history off. */
  readonly history: HistoryRetention | undefined;
  readonly capacity: CapacityCheck;
  /** Group commit of the store's directory, and of its history directory. */
  readonly rootSync: DirSync;
  readonly historySync: DirSync;
  readonly expired: ExpiredIndex;
}

// One try of a write, and what it holds on the way.
interface Attempt {
  readonly req: WriteRequest;
  /** The entry's bytes, encoded at the first call (a create refused at its first look needs none). */
  readonly entry: () => Uint8Array;
  /** Whether this try holds the key's lock from its look on. */
  readonly lookedLocked: boolean;
  /** The key's lock while this try holds it; whoever releases it clears it. */
  readonly lock: { held: HeldLock | undefined };
}

/** The writes of one file store. */
export class Writer {
  readonly #c: WriteConfig;
  // This handle's writes under way.
  #inFlight = 0;

  constructor(config: WriteConfig) {
    this.#c = config;
  }

  /**
   * Writes (or deletes) one key; see the top of this file. A create of a key that holds something
   * is refused at once, before anything is awaited (a refusal then costs about what a read does).
   */
  write(req: WriteRequest): Promise<Written> {
    if (req.rule.kind === "create") this.#refuseTaken(req.key);
    this.#inFlight++;
    return this.#writeNow(req).finally(() => this.#inFlight--);
  }

  // With history on, a create of a key that holds something is refused on one look at its name,
  // before the history directories are opened (their opens cost more than the refusal); without,
  // the look does it.
  #refuseTaken(key: string): void {
    if (this.#c.history === undefined) return;
    const kind = kindOfQuick(`${this.#c.root}/${key}.md`);
    if (kind !== null) throw kind === "file" ? exists(key) : occupied("create", key);
  }

  async #writeNow(req: WriteRequest): Promise<Written> {
    const w = req.write;
    let bytes: Uint8Array | undefined;
    const entry = () =>
      bytes ??= w === null ? NOTHING : ENCODER.encode(serializeValid(w.description, w.content));
    for (let attempt = 1;; attempt++) {
      // The first try stages before it locks, so the lock is held briefly; a key others keep
      // writing meanwhile is then written holding the lock from the look on, which always
      // makes progress.
      const held = attempt > 1 && this.#locks(req) ? await this.#lock(req) : undefined;
      const lock = { held };
      try {
        const r = await this.#attempt({ req, entry, lookedLocked: held !== undefined, lock });
        if (r !== "retry") return r;
      } finally {
        if (lock.held !== undefined) release(lock.held);
      }
      if (attempt >= MAX_ATTEMPTS || req.call.signal?.aborted) throw churn(req.key);
    }
  }

  // With history on every write locks its key; without, only a revision-checked one does (so it
  // never falls between another's check and its rename).
  #locks({ rule }: WriteRequest): boolean {
    return this.#c.history !== undefined || rule.kind === "checked" ||
      (rule.kind === "delete" && (rule.seen !== undefined || this.#c.readBeforeUpdate));
  }

  #lock({ key, call }: WriteRequest): Promise<HeldLock> {
    return acquire(lockPath(this.#c.root, key), { key, signal: call.signal });
  }

  async #attempt(a: Attempt): Promise<Written | "retry"> {
    const { key, rule } = a.req;
    const { root } = this.#c;
    const history = this.#c.history !== undefined;
    if (!history) this.#refuseKeptHistory(key);
    // A create looks at its name again on a later try (write() did on the first).
    if (rule.kind === "create" && a.lookedLocked) this.#refuseTaken(key);
    const dirs = history ? historyDirs(root, { key, create: false }) : undefined;
    try {
      const at: LookAt = {
        root,
        key,
        creating: rule.kind === "create",
        ...(dirs === undefined ? {} : { history: { ...dirs, expired: this.#c.expired } }),
      };
      const seen = look(at);
      if (judge(seen, { key, rule }) === "nothing") return { done: false, seq: 0 };
      // A revert's delete of a key that holds nothing already: nothing to write.
      if (a.req.write === null && seen.kind !== "file") return { done: false, seq: 0 };
      return await this.#write(a, { at, seen, dirs });
    } finally {
      dirs?.kd?.close();
      dirs?.hd?.close();
    }
  }

  async #write(
    a: Attempt,
    s: { at: LookAt; seen: Seen; dirs: { hd: Dir | undefined; kd: Dir | undefined } | undefined },
  ): Promise<Written | "retry"> {
    const { key, call } = a.req;
    const { seen } = s;
    // A head written with history off is recorded as a version of its own first, so it can be
    // restored; then the write looks again.
    const adopting = s.dirs !== undefined && seen.kind === "file" && seen.record === undefined &&
      seen.head !== undefined;
    const entry = adopting ? seen.head! : a.entry();
    const op = adopting || seen.kind === "file"
      ? (a.req.write === null && !adopting ? "delete" : "update")
      : a.req.write === null
      ? "delete"
      : "create";
    const tip = seen.tip;
    const bytes = tip === undefined ? entry : encodeVersion({
      key,
      seq: tip.seq,
      op: adopting && (tip.newest === undefined || tip.newest.op === "delete") ? "create" : op,
      at: new Date().toISOString(),
      ...(adopting ? { via: "unrecorded", tainted: false } : {
        run: call.scope?.run,
        actor: call.scope?.actor,
        via: call.via,
        callId: call.callId,
        tainted: call.scope?.tainted ?? false,
      }),
      prev: tip.prev,
    }, entry).bytes;
    const creating = op === "create";
    const started = creating ? this.#c.capacity.begin() : 0;
    let slot: Reservation | undefined;
    let temp: string | undefined;
    let made: Dir | undefined;
    try {
      const reserve = () => (slot = this.#reserve(started, key));
      if (op !== "delete" || tip !== undefined) {
        temp = await this.#stage({
          key,
          bytes,
          evidence: tip !== undefined,
          ...(s.dirs?.kd === undefined ? {} : { kd: s.dirs.kd }),
          ...(creating && !this.#c.capacity.crowded ? { meanwhile: reserve } : {}),
        });
      }
      if (creating) slot ??= reserve();
      if (a.lock.held === undefined && this.#locks(a.req)) a.lock.held = await this.#lock(a.req);
      let placed: Placed;
      try {
        if (!a.lookedLocked && a.lock.held !== undefined && !this.#still(s.at, seen)) {
          return "retry";
        }
        abortCheck("file", op, key, call.signal);
        const p = await this.#place({ key, op, seen, temp, kd: s.dirs?.kd, rule: a.req.rule });
        if (p === "retry" || p === "nothing") {
          return p === "retry" ? "retry" : { done: false, seq: 0 };
        }
        placed = p;
        temp = placed.temp;
        if (placed.kd !== s.dirs?.kd) made = placed.kd;
        slot?.linked();
        slot = undefined;
        if (placed.kd !== undefined && tip !== undefined && tip.seq % PRUNE_EVERY === 0) {
          await prune(placed.kd, { key, retention: this.#c.history!, top: tip.seq });
        }
      } finally {
        // Released before the flush: the next writer of the key flushes what it builds on.
        if (a.lock.held !== undefined) release(a.lock.held);
        a.lock.held = undefined;
      }
      await this.#flush(placed);
      // What the history now holds (flushed above) goes from beside the head.
      for (const id of placed.absorbed) {
        removeIfSame(`${this.#c.root}/${pendingDeleteName(key)}`, id);
      }
    } finally {
      slot?.released();
      made?.close();
      if (temp !== undefined) removeQuietly(temp);
      if (creating) this.#c.capacity.end();
    }
    if (adopting) return "retry";
    if (op !== "delete" && call.scope !== null && !call.signal?.aborted) {
      call.scope.record(this.#c.ns, key, revisionOf(entry));
    }
    return { done: true, seq: tip?.seq ?? 0 };
  }

  // Under the lock: whether the key is as the unlocked look saw it (else the write looks again).
  // The same head file means the same tip; only the names above it are looked at again.
  #still(at: LookAt, seen: Seen): boolean {
    if (!unchanged(at, seen)) return false;
    if (seen.tip === undefined || at.history === undefined) return true;
    // No history directory when it looked: still none, or another writer came first. With still
    // none, what the tip is made of is as it was: every write of a key makes that directory
    // before it links a version or a pending delete, and only a key that has one is cut.
    if (at.history.kd === undefined) return noKeyDir(at);
    return sameTip(seen.tip, seen.record !== undefined ? reprobe(at, seen) : look(at).tip);
  }

  // Puts the staged file in place; returns what it did for the flush and the steps after it.
  async #place(p: {
    key: string;
    op: "create" | "update" | "delete";
    seen: Seen;
    temp: string | undefined;
    kd: Dir | undefined;
    rule: Rule;
  }): Promise<Placed | "retry" | "nothing"> {
    const { root } = this.#c;
    const { key, op, seen } = p;
    const head = `${root}/${key}.md`;
    const tip = seen.tip;
    let kd = p.kd;
    let madeDirs = false;
    const absorbed: string[] = [];
    if (tip !== undefined) {
      if (kd === undefined) {
        const dirs = historyDirs(root, { key, create: true, made: () => (madeDirs = true) });
        dirs.hd?.close();
        kd = dirs.kd!;
      }
      if (tip.pending !== undefined) {
        // The newest delete is still beside the head: into the history before the next goes on top.
        const into = kd.at(versionName(tip.newest!.seq));
        if (tip.pending.link) link(`${root}/${pendingDeleteName(key)}`, into);
        absorbed.push(tip.pending.id);
      }
      const relinked = seen.record !== undefined && this.#relinkHead(kd, { key, seen, head });
      if (this.#c.durable && relinked) {
        // On disk before the head moves on, with the directory's own name when it is new: a cut
        // could otherwise lose that version. (The version the head had when this write looked was
        // flushed while it staged.)
        await Promise.all([syncOpenDir(kd), madeDirs ? this.#c.historySync.flush() : undefined]);
      }
    }
    const temp = p.temp;
    const version = kd?.at(versionName(tip?.seq ?? 0));
    for (const r of tip?.replace ?? []) {
      removeIfSame(kd!.at(versionName(r.seq)), r.id);
      // A delete cut short has a name beside the head too.
      absorbed.push(r.id);
    }
    try {
      if (op === "create") {
        if (version !== undefined) link(temp!, version);
        try {
          link(temp!, head);
        } catch (e) {
          if (version !== undefined) removeQuietly(version);
          if (errorKind(e) !== "EEXIST") throw e;
          // The name was taken when the link ran. Gone by now means a delete came in between:
          // the key held a memory at that instant, so this create lost to it. Only a name that is
          // still something else is an operator's problem.
          if (p.rule.kind !== "create") return "retry";
          const now = kindOf(head);
          throw now === "file" || now === null ? exists(key) : occupied("create", key);
        }
        removeQuietly(temp!);
        return { kd, madeDirs, absorbed, temp: undefined };
      }
      if (op === "update") {
        if (version !== undefined) link(temp!, version);
        rename(temp!, head);
        return { kd, madeDirs, absorbed, temp: undefined };
      }
      if (version === undefined) {
        // A delete with history off: the name goes (false: a concurrent deleter won).
        return remove(head) ? { kd, madeDirs, absorbed, temp: undefined } : "nothing";
      }
      // The delete's version goes beside the head first, so the head never goes without it
      // whatever a cut keeps of the store's directory; then into the history; then the head.
      const pending = `${root}/${pendingDeleteName(key)}`;
      const there = kindOf(pending);
      if (there !== null && there !== "file") {
        throw refusal(key, `${pendingDeleteName(key)} in the memory directory is not a file`);
      }
      rename(temp!, pending);
      link(pending, version);
      remove(head);
      const id = fileIdOf(pending);
      if (id !== undefined) absorbed.push(id);
      return { kd, madeDirs, absorbed, temp: undefined };
    } catch (e) {
      if (errorKind(e) === "EEXIST" && version !== undefined) {
        // Something took the version's name since the look (under the lock: not a writer).
        throw refusal(key, `${kd!.where}/${versionName(tip!.seq)} appeared during the write`);
      }
      throw e;
    }
  }

  // A cut can keep a head's rename without its link into the history (the two directories are
  // flushed apart): the head is that version, so before the next version goes on top it is linked
  // back. Another file under its sequence is what a killed writer left above an older head, kept
  // by the cut that lost the head's link: it counts for nothing and is replaced. True when it
  // linked. One lstat on the common path (the link is there).
  #relinkHead(kd: Dir, h: { key: string; seen: Seen; head: string }): boolean {
    const name = versionName(h.seen.record!.seq);
    const to = kd.at(name);
    // The head is the file the look saw (under the lock: #still or a look made holding it).
    if (h.seen.id === null) return false;
    const id = fileIdOfIdentity(h.seen.id);
    const st = lstatOf(to);
    const there = fileIdOfStat(st);
    if (there === id) return false;
    if (there === undefined && st !== null) {
      throw refusal(h.key, `${kd.where}/${name} is not a version file`);
    }
    if (there !== undefined) removeQuietly(to);
    link(h.head, to);
    return true;
  }

  // The store's directory (group commit); the key's history directory only where a version
  // must be on disk before this write is done (a key's first, whose directories are new; a delete,
  // whose version goes from beside the head after it; a delete absorbed): any other version is
  // its head until the next write of the key, which flushes it first (#place).
  async #flush(p: Placed): Promise<void> {
    if (!this.#c.durable) return;
    const own = p.kd !== undefined && (p.madeDirs || p.absorbed.length > 0);
    await Promise.all([
      this.#c.rootSync.flush(),
      own ? syncOpenDir(p.kd!) : undefined,
      p.madeDirs ? this.#c.historySync.flush() : undefined,
    ]);
  }

  #reserve(started: number, key: string): Reservation {
    try {
      return this.#c.capacity.reserve(started, key);
    } catch (e) {
      // A full store still says "exists" for a key it holds: that is the answer a caller can use.
      if (kindOf(`${this.#c.root}/${key}.md`) === "file") throw exists(key);
      throw e;
    }
  }

  // Writes `bytes` to a new temp file in the store's directory (mode 0600) and flushes it, durable
  // or not: a name linked or renamed to data no flush covered can survive a cut without that data
  // (an empty entry), so this flush keeps every write atomic. With history on (and durable), the
  // directory is flushed meanwhile too: the temp's name on disk before any version links it is
  // what tells a write cut short from a rollback. `meanwhile` runs while the flush is under way
  // (the capacity count), so its cost hides behind the disk's.
  async #stage(o: {
    readonly key: string;
    readonly bytes: Uint8Array;
    readonly evidence: boolean;
    readonly kd?: Dir;
    readonly meanwhile?: () => void;
  }): Promise<string> {
    const { key, bytes } = o;
    const temp = `${this.#c.root}/${tempName(key, selfToken())}`;
    // With other writes in flight the file is made off the event loop (see createWithAsync).
    const fd = this.#inFlight > 1
      ? await createWithAsync(temp, { bytes, mode: FILE_MODE })
      : createWith(temp, { bytes, mode: FILE_MODE });
    try {
      const durable = o.evidence && this.#c.durable;
      const flushed = Promise.all([
        syncData(fd),
        durable ? this.#c.rootSync.flush() : undefined,
        // The version the head has now was linked before this write looked: on disk before the
        // head moves on, so a cut can never keep a head whose predecessor it lost.
        durable && o.kd !== undefined ? syncOpenDir(o.kd) : undefined,
      ]);
      try {
        o.meanwhile?.();
      } finally {
        await flushed;
      }
    } catch (e) {
      removeQuietly(temp);
      throw e;
    } finally {
      close(fd);
    }
    return temp;
  }

  // A handle with history off never writes where history is kept (no write without a version).
  #refuseKeptHistory(key: string): void {
    if (kindOfQuick(`${this.#c.root}/${HISTORY_DIR}`) === null) return;
    throw new ConfigError(
      `[memory:file] Cannot write memory ${
        quote(key)
      }: the memory directory keeps history, and this store was opened with option "history" false; open it with history on (the default)`,
    );
  }
}

/** What a placed write leaves to do. */
interface Placed {
  /** The key's history directory, when the write linked a version there. */
  readonly kd: Dir | undefined;
  /** Whether it made the history directories (whose parent then needs a flush). */
  readonly madeDirs: boolean;
  /** Files beside the head that the history now holds (pending deletes, by identity). */
  readonly absorbed: string[];
  /** A staged file left to remove. */
  readonly temp: string | undefined;
}

// Whether `at`'s key still has no history directory (nothing under its name in `.history`).
function noKeyDir(at: LookAt): boolean {
  const hd = at.history!.hd;
  if (hd !== undefined) return kindOfQuick(hd.at(at.key)) === null;
  const now = historyDirs(at.root, { key: at.key, create: false });
  now.kd?.close();
  now.hd?.close();
  return now.kd === undefined;
}

// Whether a write may go ahead on what it saw: throws the refusal, or "nothing" for a delete of
// a key that holds nothing.
function judge(seen: Seen, o: { key: string; rule: Rule }): "write" | "nothing" {
  const { key, rule } = o;
  if (seen.kind !== null && seen.kind !== "file") {
    // Not a memory: left alone by every write.
    if (rule.kind === "delete") return "nothing";
    throw occupied(rule.kind === "create" ? "create" : "update", key);
  }
  const holds = seen.kind === "file";
  switch (rule.kind) {
    case "create":
      if (holds) throw exists(key);
      return "write";
    case "replace":
      return "write";
    case "delete":
      if (rule.seen === undefined) return holds ? "write" : "nothing";
      return judgeSeen(seen, { key, revision: rule.seen, op: "delete" });
    case "checked":
      return judgeSeen(seen, { key, revision: rule.seen, op: "update" });
    case "expect": {
      if (seen.unreadable !== undefined) throw seen.unreadable;
      const newest = seen.tip?.newest === undefined ? null : String(seen.tip.newest.seq);
      if (newest !== rule.expected || (holds && seen.record === undefined)) {
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
function judgeSeen(
  seen: Seen,
  o: { key: string; revision: number; op: "update" | "delete" },
): "write" {
  const { key, revision, op } = o;
  if (seen.unreadable !== undefined) throw seen.unreadable;
  if (seen.head === undefined) {
    throw stale(key, {
      why: `it was deleted since this run read it; read it again, then ${op}`,
      op,
    });
  }
  if (revisionOf(splitFile(seen.head, key).entry) !== revision) {
    throw stale(key, { why: `it changed since this run read it; read it again, then ${op}`, op });
  }
  return "write";
}
