// What a writer sees of a key before it writes: what is under the key's name, the head's bytes,
// and with history on where the new version goes (its sequence, the hash it chains to, and a
// write cut short to replace there). The rules are chain.ts's, seen cheaply: a head with a record
// is the tip, and only the names just above it are probed.

import { existsSync } from "node:fs";
import { CorruptError, UnavailableError } from "../../store/errors.ts";
import { quote } from "../../store/text.ts";
import { GENESIS, type VersionRecord } from "./envelope.ts";
import { type Dir, NotOurDir, openDir } from "./dirs.ts";
import {
  close,
  fileIdOf,
  identityOf,
  identityOfStat,
  type Kind,
  kindOfQuick,
  kindOfStat,
  lstatOf,
} from "./fs.ts";
import { openFile, readCurrent, splitFile } from "./read.ts";
import { readKey } from "./chain.ts";
import { HISTORY_DIR, pendingDeleteName, versionName } from "./names.ts";
import type { ExpiredIndex } from "./cut.ts";

/** Where a new version goes. */
export interface Tip {
  /** The newest committed version (none for a key that has none). */
  readonly newest: VersionRecord | undefined;
  /** The new version's sequence. */
  readonly seq: number;
  /** The hash it chains to. */
  readonly prev: string;
  /** Writes cut short above the newest version (by sequence and identity), which it replaces. */
  readonly replace: readonly { readonly seq: number; readonly id: string }[];
  /**
   * The newest version when it is a delete still kept beside the head (`.<key>.del`): its
   * identity, and whether the history lacks it (so the write links it there first).
   */
  readonly pending: { readonly id: string; readonly link: boolean } | undefined;
}

/** What a writer saw of a key. */
export interface Seen {
  readonly kind: Kind;
  /** The head's bytes (a copy), when it is a readable regular file. */
  readonly head: Uint8Array | undefined;
  /** The head's record, when it has a readable one. */
  readonly record: VersionRecord | undefined;
  /** Why the head cannot be used (unreadable, or a damaged record), when it cannot. */
  readonly unreadable?: unknown;
  /** Which file the head was (`identityOf`), to tell whether it changed. */
  readonly id: string | null;
  /** With history on. */
  readonly tip?: Tip | undefined;
}

/** What a look needs. */
export interface LookAt {
  readonly root: string;
  readonly key: string;
  /** Whether a create only (a stat is enough to refuse a key that holds a file). */
  readonly creating: boolean;
  /** With history on: the open history directory (undefined: none yet) and the key's. */
  readonly history?: {
    readonly hd: Dir | undefined;
    readonly kd: Dir | undefined;
    readonly expired: ExpiredIndex;
  };
}

const NOTHING: Seen = { kind: null, head: undefined, record: undefined, id: null };

/** Looks at a key (see the top of this file). */
export function look(at: LookAt): Seen {
  const path = `${at.root}/${at.key}.md`;
  // A stat that fails (the directory replaced by a file, say) fails the call; a create may use
  // the cheap look, since `link` is the arbiter and fails safely.
  // An update or a delete takes the head's identity from the same lstat (one call, not two).
  const st = at.creating ? undefined : lstatOf(path);
  const kind = st === undefined ? kindOfQuick(path) : kindOfStat(st);
  if (kind !== null && kind !== "file") return { ...NOTHING, kind };
  const seen = kind === null ? NOTHING : readHeadBytes(path, {
    key: at.key,
    id: st ? identityOfStat(st) : identityOf(path),
  });
  if (at.history === undefined || (seen.kind === "file" && at.creating)) return seen;
  return { ...seen, tip: tipOf(at, seen) };
}

/** Whether the key still holds what `seen` saw (the same file under its name). */
export function unchanged(at: LookAt, seen: Seen): boolean {
  const path = `${at.root}/${at.key}.md`;
  // Still nothing, cheaply (no error object): a dangling symlink answers false too, and a write
  // that saw nothing places with `link`, which refuses it.
  if (seen.id === null && !existsSync(path)) return true;
  return identityOf(path) === seen.id;
}

/** The tip of a key whose head (with its record) is still what `seen` saw, looked at again. */
export function reprobe(at: LookAt, seen: Seen): Tip {
  const record = seen.record!;
  return probe(at.history!.kd, { key: at.key, newest: record, base: record, pending: undefined });
}

/** Whether two tips put the new version in the same place. */
export function sameTip(a: Tip | undefined, b: Tip | undefined): boolean {
  const ids = (t: Tip | undefined) => t?.replace.map((r) => r.id).join() ?? "";
  return a?.seq === b?.seq && a?.prev === b?.prev && ids(a) === ids(b) &&
    a?.newest?.hash === b?.newest?.hash && a?.pending?.id === b?.pending?.id;
}

// `id`: the head's identity, taken before the read (a head replaced meanwhile reads as another
// file under the lock).
function readHeadBytes(path: string, o: { key: string; id: string | null }): Seen {
  const { key, id } = o;
  let head: Uint8Array | undefined;
  try {
    head = readCurrent(path, { key })?.slice();
  } catch (e) {
    if (e instanceof CorruptError) throw e;
    return { kind: "file", head: undefined, record: undefined, id, unreadable: e };
  }
  if (head === undefined) return { ...NOTHING, id };
  try {
    return { kind: "file", head, record: splitFile(head, key).record, id };
  } catch (e) {
    if (!(e instanceof CorruptError)) throw e;
    // A head whose record line is damaged: the history says what is committed; the next write
    // replaces the damaged head as it would a damaged entry.
    return { kind: "file", head: undefined, record: undefined, id, unreadable: e };
  }
}

function tipOf(at: LookAt, seen: Seen): Tip {
  const h = at.history!;
  if (seen.record !== undefined) {
    return probe(h.kd, {
      key: at.key,
      newest: seen.record,
      base: seen.record,
      pending: undefined,
    });
  }
  // No head, or one without a readable record: the history alone says what is committed.
  const expired = h.hd === undefined ? undefined : h.expired.read(h.hd).byKey.get(at.key);
  // Nothing under the key's name when it looked (or, for a create, maybe a dangling symlink, which
  // its link refuses): the head is not read again. One that appeared since is another writer's,
  // which the look under the lock sees.
  const kh = readKey(at.key, {
    root: at.root,
    hd: h.hd,
    expired,
    ...(seen.kind === null ? { headAbsent: true } : {}),
  });
  const foreign = kh.problems.find((p) => p.problem === "foreign" && p.revision === undefined);
  if (foreign !== undefined) throw refusal(at.key, foreign.reason);
  const newest = kh.tip;
  const top = kh.chain[0];
  const pending = seen.kind !== null || newest?.op !== "delete" || top === undefined
    ? undefined
    : top.place === "pending"
    ? { id: top.facts.id, link: true }
    : fileIdOf(`${at.root}/${pendingDeleteName(at.key)}`) === top.facts.id
    ? { id: top.facts.id, link: false }
    : undefined;
  const base = newest ??
    (kh.cut === undefined ? undefined : { seq: kh.cut.seq, hash: kh.cut.hash });
  return probe(h.kd, { key: at.key, newest, base, pending });
}

// The names just above `base`. Writes cut short there (a second name: their staged file) are
// replaced, all of them; versions without one were committed and rolled back by hand, so the new
// one goes above them, chained to `base`, and they stay for check to report.
function probe(
  kd: Dir | undefined,
  from: {
    key: string;
    newest: VersionRecord | undefined;
    base: { seq: number; hash: string } | undefined;
    pending: Tip["pending"];
  },
): Tip {
  const key = from.key;
  const start = (from.base?.seq ?? 0) + 1;
  const prev = from.base?.hash ?? GENESIS;
  const found: { seq: number; id: string; cutShort: boolean }[] = [];
  for (let seq = start; kd !== undefined; seq++) {
    const at = kd.at(versionName(seq));
    // Nothing there is the common case, and a failed open costs an error object; a dangling
    // symlink answers false too, and the link that then meets it fails safely.
    if (!existsSync(at)) break;
    const o = openFile(at);
    if ("absent" in o) break;
    if ("denied" in o) {
      // One this process may not read: never replaced, the new version goes above it.
      found.push({ seq, id: "", cutShort: false });
      continue;
    }
    if ("other" in o) {
      throw refusal(key, `${kd.where}/${versionName(seq)} is ${o.other}, not a version file`);
    }
    close(o.fd);
    found.push({ seq, id: o.facts.id, cutShort: o.facts.nlink >= 2 });
  }
  const orphans = found.some((f) => !f.cutShort);
  const top = found.at(-1);
  // Without rolled-back versions, every write cut short goes and the new one takes the first place.
  const replace = orphans
    ? top?.cutShort === true ? [top] : []
    : found.map(({ seq, id }) => ({ seq, id }));
  const seq = !orphans ? start : top!.cutShort ? top!.seq : top!.seq + 1;
  return { newest: from.newest, seq, prev, replace, pending: from.pending };
}

/** Opens the history directory and the key's, making them when `create`; undefined: missing. */
export function historyDirs(
  root: string,
  which: { readonly key: string; readonly create: boolean; readonly made?: () => void },
): { hd: Dir | undefined; kd: Dir | undefined } {
  const { key, ...opts } = which;
  let hd: Dir | undefined;
  try {
    hd = openDir(root, { name: HISTORY_DIR, ...opts });
    const kd = hd === undefined ? undefined : openDir(hd, { name: key, ...opts });
    return { hd, kd };
  } catch (e) {
    hd?.close();
    if (e instanceof NotOurDir) {
      throw refusal(
        key,
        `${e.where} in the memory directory is ${e.what}, not a history directory`,
      );
    }
    throw e;
  }
}

/** A write refused because of something this library did not put there. */
export function refusal(key: string, why: string): UnavailableError {
  return new UnavailableError(
    `[memory:file] Cannot write memory ${
      quote(key)
    }: ${why}; agentmem check names it, and an operator must remove it`,
    { key },
  );
}
