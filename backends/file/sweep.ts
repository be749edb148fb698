// Cleaning up after writers that died mid-write: their temp files (which hold a full entry body)
// and their locks. A temp file's name carries its writer's token, `.<key>.<token>.<hex>.tmp`, so
// a sweeper removes it as soon as that writer is dead, and never while it lives, however long a
// live writer takes (paused, say). Where liveness cannot be known (no /proc, another pid
// namespace, or a temp file named by an older version), only a file older than STALE_TEMP_MS goes.

import { breakIfStale } from "./lock.ts";
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
    else if (name.endsWith(".lock")) void breakIfStale(`${root}/${name}`).catch(() => {});
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

function sweepTemp(path: string, name: string): void {
  const parts = name.split(".");
  const token = parts.length >= 5 ? parts[parts.length - 3] ?? "" : "";
  const state = liveness(token);
  if (state === "alive") return;
  if (state === "unknown") {
    const mtime = fileMtime(path);
    if (mtime === undefined || Date.now() - mtime < STALE_TEMP_MS) return;
  }
  removeQuietly(path);
}
