// A per-key advisory lock for the file backend's revision-checked writes, shared by every process
// on the machine whatever its runtime (Node and Bun have no flock, so the lock is a file).
//
// - Acquire: create `.<key>.lock` exclusively (O_EXCL), holding the holder's token and a nonce.
// - The lock is held only around synchronous work (read the current entry, compare, rename), a
//   few tens of microseconds, never across an await, let alone a model's turn.
// - A lock whose holder is dead (its process is gone, see process.ts) is broken; where liveness
//   cannot be known, a lock is broken once it is STALE_MS old, far longer than any holder keeps it.
// - Breaking is itself exclusive: only the process holding `<lock>.b<hash of the dead content>`
//   may remove the dead lock, and it removes it only if the lock still holds that content and is
//   still stale. Two breakers can therefore never remove a lock a live process took meanwhile.
//   The break-lock is acquired by the same rules, so a breaker killed mid-break is broken in turn.

import { createHash } from "node:crypto";
import { UnavailableError } from "../../store/errors.ts";
import { errorKind, quote } from "../../store/_text.ts";
import { close, createWith, fileMtime, readSmallText, remove, removeQuietly } from "./fs.ts";
import { liveness, selfToken } from "./process.ts";

/** A lock whose holder's liveness cannot be known is broken after this long. */
export const STALE_MS = 30_000;
/** How long a writer waits for a lock held by a live process before giving up. */
export const LOCK_WAIT_MS = 10_000;
// A break-lock of a break-lock ...: each level needs another process killed mid-break.
const MAX_DEPTH = 3;
const ENCODER = new TextEncoder();

/** A held lock; pass it to `release`. */
export interface HeldLock {
  readonly path: string;
  readonly content: string;
}

/** The lock file of `key` in `root`. */
export function lockPath(root: string, key: string): string {
  return `${root}/.${key}.lock`;
}

/**
 * Takes the lock at `path`, waiting (asynchronously) while a live process holds it.
 *
 * @throws {UnavailableError} when the lock stays held for `LOCK_WAIT_MS` or `signal` aborts.
 */
export async function acquire(
  path: string,
  key: string,
  signal?: AbortSignal,
  depth = 0,
): Promise<HeldLock> {
  const content = `${selfToken()} ${nonce()}`;
  const bytes = ENCODER.encode(content);
  const giveUp = Date.now() + LOCK_WAIT_MS;
  for (let wait = 1;; wait = Math.min(wait * 2, 16)) {
    try {
      close(createWith(path, bytes, 0o600));
      return { path, content };
    } catch (e) {
      if (errorKind(e) !== "EEXIST") throw e;
    }
    const held = readSmallText(path);
    if (held !== undefined && isStale(path, held)) {
      if (depth >= MAX_DEPTH) throw busy(key, "its lock is being broken by several processes");
      await breakLock(path, held, key, signal, depth);
      continue;
    }
    if (signal?.aborted) {
      throw new UnavailableError(
        `[memory:file] Cannot write memory ${quote(key)}: the call was aborted`,
        { key, cause: signal.reason },
      );
    }
    if (Date.now() > giveUp) {
      throw busy(key, `another writer held its lock for ${LOCK_WAIT_MS} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/** Releases a lock this process holds (unless it was broken while this process was paused). */
export function release(lock: HeldLock): void {
  if (readSmallText(lock.path) === lock.content) removeQuietly(lock.path);
}

/** Runs `fn` (synchronous) under the lock at `path`. */
export async function withLock<T>(
  path: string,
  key: string,
  signal: AbortSignal | undefined,
  fn: () => T,
): Promise<T> {
  const lock = await acquire(path, key, signal);
  try {
    return fn();
  } finally {
    release(lock);
  }
}

/** Removes the lock at `path` if its holder is dead; for sweeping a directory. */
export async function breakIfStale(path: string): Promise<void> {
  const held = readSmallText(path);
  if (held !== undefined && isStale(path, held)) await breakLock(path, held, "", undefined, 0);
}

function isStale(path: string, content: string): boolean {
  const state = liveness(content.split(" ", 1)[0] ?? "");
  if (state !== "unknown") return state === "dead";
  // An empty lock is one whose holder is between creating and writing it: judged by age too.
  const mtime = fileMtime(path);
  return mtime !== undefined && Date.now() - mtime > STALE_MS;
}

async function breakLock(
  path: string,
  dead: string,
  key: string,
  signal: AbortSignal | undefined,
  depth: number,
): Promise<void> {
  const hash = createHash("sha256").update(dead).digest("hex").slice(0, 12);
  const right = await acquire(`${path}.b${hash}`, key, signal, depth + 1);
  try {
    // Only the holder of the break-lock for this content removes it, and only while it is still
    // this very content and still stale: a lock taken since is left alone.
    if (readSmallText(path) === dead && isStale(path, dead)) remove(path);
  } finally {
    release(right);
  }
}

function busy(key: string, why: string): UnavailableError {
  return new UnavailableError(`[memory:file] Cannot write memory ${quote(key)}: ${why}`, { key });
}

function nonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
