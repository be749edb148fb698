// Cleaning up after writers that died mid-write: their temp files and their locks. A temp file's
// name carries its writer's token (names.ts), so it goes as soon as that writer is judged dead
// (process.ts), never while it is judged alive; one whose writer cannot be judged from here goes
// once it is STALE_TEMP_MS old. A temp file that is also a version above its key's tip is the
// evidence of a write cut short (chain.ts): that version goes first, under the key's lock, at a
// store's open. Locks go only when their holder is judged dead (lock.ts).

import { breakIfDead, isLockFile, isLockName, lockPath, release, tryAcquire } from "./lock.ts";
import { fileIdOf, fileMtime, listNames, type Name, removeIfSame } from "./fs.ts";
import { liveness } from "./process.ts";
import { HISTORY_DIR, keyOfTemp, TEMP_SUFFIX, versionName } from "./names.ts";
import { namesIn, openDir } from "./dirs.ts";
import { readKey } from "./chain.ts";
import * as fs from "node:fs";

/** A temp file whose writer's liveness is unknown is removed once it is this old. */
export const STALE_TEMP_MS = 60 * 60 * 1000;

/**
 * Removes what a dead writer left under `name` in `root`, if anything; never throws. A temp file
 * that is a write cut short is left for `sweepDir`.
 */
export function sweepName(root: string, entry: Name): void {
  const { name, isFile } = entry;
  if (!isFile || name.charCodeAt(0) !== 0x2e) return;
  try {
    if (name.endsWith(TEMP_SUFFIX) && deadTemp(root, name) === "alone") {
      fs.rmSync(`${root}/${name}`, { force: true });
    } else if (isLockName(name)) void breakIfDead(`${root}/${name}`).catch(() => {});
  } catch {
    // Best effort: what cannot be removed now is tried again at the next sweep.
  }
}

/** Sweeps a whole directory (when a store opens); never throws. */
export async function sweepDir(root: string): Promise<void> {
  let names;
  try {
    names = listNames(root);
  } catch {
    return; // An unreadable directory fails the first real call with a clear error instead.
  }
  for (const { name, isFile } of names) {
    try {
      if (isFile && name.endsWith(TEMP_SUFFIX) && deadTemp(root, name) === "linked") {
        await dropCutShort(root, name);
      } else sweepName(root, { name, isFile });
    } catch {
      // Best effort.
    }
  }
}

/** The token a temp file's name carries, or "" when it carries none. */
export function tempToken(name: string): string {
  const parts = name.split(".");
  return parts.length >= 5 ? parts[parts.length - 3] ?? "" : "";
}

// Whether the temp file `name` is a dead writer's: "alone" when it is its file's only name,
// "linked" when the file has another (a version, a head), undefined when it must stay.
function deadTemp(root: string, name: string): "alone" | "linked" | undefined {
  const path = `${root}/${name}`;
  const state = liveness(tempToken(name));
  if (state === "alive") return undefined;
  if (state === "unknown") {
    const mtime = fileMtime(path);
    if (mtime === undefined || Date.now() - mtime < STALE_TEMP_MS) return undefined;
  }
  const st = fs.lstatSync(path, { throwIfNoEntry: false });
  if (st === undefined || !st.isFile()) return undefined;
  // A lock's own file (lock.ts) is never a version.
  return st.nlink > 1 && !isLockFile(path) ? "linked" : "alone";
}

// A dead writer's temp file that has another name: if that name is a version above its key's
// tip (a write cut short), the version goes first, under the key's lock, then the temp file.
async function dropCutShort(root: string, name: string): Promise<void> {
  const path = `${root}/${name}`;
  const id = fileIdOf(path);
  if (id === undefined) return;
  for (const key of keysFor(root, name)) {
    const lock = await tryAcquire(lockPath(root, key), { key, ms: 100 });
    if (lock === undefined) return; // busy: left for the next sweep
    try {
      const hd = openDir(root, HISTORY_DIR);
      if (hd === undefined) break;
      try {
        const kh = readKey(key, { root, hd, temps: new Set([id]) });
        const top = kh.tip?.seq ?? kh.cut?.seq ?? 0;
        const kd = openDir(hd, key);
        if (kd === undefined) continue;
        try {
          for (let seq = top + 1;; seq++) {
            const at = kd.at(versionName(seq));
            const there = fileIdOf(at);
            if (there === undefined) break;
            if (there === id) removeIfSame(at, id);
          }
        } finally {
          kd.close();
        }
      } finally {
        hd.close();
      }
    } finally {
      release(lock);
    }
  }
  removeIfSame(path, id);
}

// The keys a temp file's name may stand for (a long key's name holds only its start).
function keysFor(root: string, name: string): string[] {
  const of = keyOfTemp(name);
  if (of === undefined) return [];
  if ("key" in of) return [of.key];
  try {
    const hd = openDir(root, HISTORY_DIR);
    if (hd === undefined) return [];
    try {
      return namesIn(hd).map((n) => n.name).filter((n) => n.startsWith(of.prefix));
    } finally {
      hd.close();
    }
  } catch {
    return [];
  }
}
