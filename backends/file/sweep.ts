// Cleaning up after writers that died mid-write: their temp files (an entry's body, or a lock not
// yet published) and their locks. A temp file's name carries its writer's token,
// `.<name>.<token>.<hex>.tmp`, so a sweeper removes it as soon as that writer is judged dead, and
// never while it is judged alive, however long a live writer takes (paused, say). Judged as locks
// are (process.ts): only where this process's /proc shows the writer's pid namespace.
//
// Where the writer cannot be judged from here (another container, no readable /proc, a name from
// an older version), a temp file older than STALE_TEMP_MS goes: unlike a lock, which no age may
// break, a temp file swept under a writer stalled for an hour costs that one write an error, never
// a lost update, while dead writers' bodies would otherwise pile up in a shared directory forever.
// Locks are swept only when their holder is judged dead (lock.ts).

import { breakIfDead, isLockName } from "./lock.ts";
import { fileMtime, listNames, removeQuietly } from "./fs.ts";
import { liveness } from "./process.ts";
import { TEMP_SUFFIX } from "./names.ts";

/** A temp file whose writer's liveness is unknown is removed once it is this old. */
export const STALE_TEMP_MS = 60 * 60 * 1000;

/** Removes what a dead writer left under `name` in `root`, if anything; never throws. */
export function sweepName(root: string, name: string, isFile: boolean): void {
  if (!isFile || name.charCodeAt(0) !== 0x2e) return;
  try {
    if (name.endsWith(TEMP_SUFFIX)) sweepTemp(`${root}/${name}`, name);
    else if (isLockName(name)) void breakIfDead(`${root}/${name}`).catch(() => {});
  } catch {
    // Best effort: what cannot be removed now is tried again at the next sweep.
  }
}

/** Sweeps a whole directory (when a store opens); never throws. */
export function sweepDir(root: string): void {
  try {
    for (const { name, isFile } of listNames(root)) sweepName(root, name, isFile);
  } catch {
    // An unreadable directory fails the first real call with a clear error instead.
  }
}

/** The token a temp file's name carries, or "" when it carries none. */
export function tempToken(name: string): string {
  const parts = name.split(".");
  return parts.length >= 5 ? parts[parts.length - 3] ?? "" : "";
}

function sweepTemp(path: string, name: string): void {
  const state = liveness(tempToken(name));
  if (state === "alive") return;
  if (state === "unknown") {
    const mtime = fileMtime(path);
    if (mtime === undefined || Date.now() - mtime < STALE_TEMP_MS) return;
  }
  removeQuietly(path);
}
