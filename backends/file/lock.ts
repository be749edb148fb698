// A per-key lock for the file backend's writes, shared by every process on the machine whatever
// its runtime, pid namespace or container: the name `.<key>.lock`, published with `link` from a
// file that holds its holder's token (lock_file.ts: on Deno one file per process and directory).
// `withLock` runs a synchronous section under it, `acquire` and `release` hold it across awaits.
// Acquiring waits while a live (or unjudgeable) holder has it, honours its signal, breaks a dead
// holder's lock (exclusively, and only that very file), and fails with `UnavailableError` after
// LOCK_WAIT_MS, or at once for a name this library did not write. Why it is built so:
// docs/design/file-locks.md.

import { createHash } from "node:crypto";
import { UnavailableError } from "../../store/errors.ts";
import { errorKind, quote } from "../../store/text.ts";
import {
  close,
  describeName,
  type FileId,
  link,
  lstatId,
  openForRead,
  readAll,
  regularFileOf,
  remove,
  removeQuietly,
} from "./fs.ts";
import { tryKernelLock } from "./kernel.ts";
import { holdsOpen, liveness } from "./process.ts";
import { forgetShared, lockFileFor } from "./lock_file.ts";

/** How long a writer waits for a lock held by a live (or unjudgeable) process before giving up. */
export const LOCK_WAIT_MS = 10_000;
/** How long a lock file may be without content before it is taken for a power cut's leftover. */
export const EMPTY_GRACE_MS = 1_000;
// A break-lock of a break-lock ...: each level needs another process killed mid-break.
const MAX_DEPTH = 3;
/** No lock this library writes is longer: `<10>-<20>-<8> <12> k`. */
const MAX_LOCK_BYTES = 64;
const LOCK_CONTENT = /^(\d{1,10}-\d{1,20}-[0-9a-f]{8}) [0-9a-f]{12} ([kp])$/;
const LOCK_NAME = /^\..+\.lock(\.b[0-9a-f]{12})*$/;
const DECODER = new TextDecoder();
const READ_BUF = new Uint8Array(MAX_LOCK_BYTES + 1);

/** A held lock; pass it to `release`. */
export interface HeldLock {
  readonly path: string;
  readonly content: string;
  readonly file: FileId;
  /** Closes the holder's descriptor of the lock file (and so drops its kernel lock). */
  readonly close: () => void;
}

/** What a lock name holds, as judged from this process. */
export type LockState =
  | { readonly state: "gone" }
  | { readonly state: "held"; readonly content: string }
  | { readonly state: "unknown"; readonly why: string }
  | { readonly state: "dead"; readonly content: string; readonly file: FileId }
  | { readonly state: "foreign"; readonly what: string };

/** The lock file of `key` in `root`. */
export function lockPath(root: string, key: string): string {
  return `${root}/.${key}.lock`;
}

/** Whether `name` (in a memory directory) is a lock's or a break-lock's. */
export function isLockName(name: string): boolean {
  return LOCK_NAME.test(name);
}

/** Runs `fn` (synchronous) under the lock at `path`; see the top of this file. */
export async function withLock<T>(
  at: { readonly path: string; readonly key: string; readonly signal: AbortSignal | undefined },
  fn: () => T,
): Promise<T> {
  const lock = await acquire(at.path, at);
  try {
    return fn();
  } finally {
    release(lock);
  }
}

/**
 * Takes the lock at `path`, waiting (asynchronously) while a live or unjudgeable process holds
 * it, breaking it when its holder is dead.
 *
 * @throws {UnavailableError} when the name holds something this library did not write, when the
 * lock stays held for `LOCK_WAIT_MS`, or when `signal` aborts.
 */
export async function acquire(
  path: string,
  o: { readonly key: string; readonly signal?: AbortSignal | undefined; readonly depth?: number },
): Promise<HeldLock> {
  const { key, signal, depth = 0 } = o;
  const giveUp = Date.now() + LOCK_WAIT_MS;
  let mine = lockFileFor(path);
  let linked = false;
  let strays = 0;
  try {
    for (let wait = 1, spins = 0;;) {
      try {
        link(mine.temp, path);
        linked = true;
        mine.linked();
        return { path, content: mine.content, file: mine.file, close: mine.close };
      } catch (e) {
        if (errorKind(e) === "ENOENT" && !mine.own) {
          // The shared file's name is gone (removed by hand): a file of its own from now on.
          forgetShared(mine);
          mine.close();
          mine = lockFileFor(path);
          continue;
        }
        if (errorKind(e) !== "EEXIST") throw e;
        if (strays++ < 3 && mine.strayAt()) {
          // This process's own name for no lock it holds: nobody else may remove it.
          removeQuietly(path);
          continue;
        }
      }
      const seen = inspect(path);
      if (seen.state === "foreign") throw foreign(key, { path, what: seen.what });
      if (seen.state === "dead") {
        if (depth >= MAX_DEPTH) throw busy(key, "its lock is being broken by several processes");
        await breakLock(path, { dead: seen, key, signal, depth });
        continue;
      }
      // Released between the link and the look: try again at once, a few times in a row.
      if (seen.state === "gone" && ++spins % 8 !== 0) continue;
      if (signal?.aborted) {
        throw new UnavailableError(
          `[memory:file] Cannot write memory ${quote(key)}: the call was aborted`,
          { key, cause: signal.reason },
        );
      }
      if (Date.now() > giveUp) {
        throw seen.state === "unknown"
          ? busy(
            key,
            `its lock ${quote(nameOf(path))} has been held for ${LOCK_WAIT_MS} ms by a process ` +
              `this one cannot judge (${seen.why}); if no writer is running, an operator may ` +
              `remove that file`,
          )
          : busy(key, `another writer held its lock for ${LOCK_WAIT_MS} ms`);
      }
      await sleep(wait, signal);
      wait = Math.min(wait * 2, 16);
    }
  } finally {
    // The lock's own name keeps its file; a file of its own loses its staged name either way.
    if (mine.own) removeQuietly(mine.temp);
    if (!linked) mine.close();
  }
}

/**
 * Takes the lock at `path` if it can within `ms` (housekeeping that must never hold up a write);
 * `undefined` when it could not.
 */
export async function tryAcquire(
  path: string,
  o: { readonly key: string; readonly ms: number },
): Promise<HeldLock | undefined> {
  const { key, ms } = o;
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), ms);
  try {
    return await acquire(path, { key, signal: stop.signal });
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** Releases a lock this process holds: its name goes (if it is still this lock), then its file. */
export function release(lock: HeldLock): void {
  try {
    const now = lstatId(lock.path);
    if (now !== undefined && now.dev === lock.file.dev && now.ino === lock.file.ino) {
      removeQuietly(lock.path);
    }
  } catch {
    // Left in place, with its file closed: the next writer judges it dead and breaks it.
  } finally {
    lock.close();
  }
}

/**
 * What the lock name `path` holds, judged from here. Opens it as entries are opened (never
 * through a symlink, never blocking), and writes nothing (trying a kernel lock takes it for an
 * instant when it is free).
 */
export function inspect(path: string): LockState {
  const what = describeName(path);
  if (what === null) return { state: "gone" };
  if (what !== "file") return { state: "foreign", what: `it is ${what}` };
  let fd: number;
  try {
    fd = openForRead(path);
  } catch (e) {
    const code = errorKind(e);
    if (code === "ENOENT") return { state: "gone" };
    if (code === "EACCES" || code === "EPERM") return { state: "unknown", why: "it is unreadable" };
    return { state: "foreign", what: "it is not a regular file" };
  }
  try {
    const file = regularFileOf(fd);
    if (file === undefined) return { state: "foreign", what: "it is not a regular file" };
    if (file.size > MAX_LOCK_BYTES) return { state: "foreign", what: "it holds more than a lock" };
    const n = readAll(fd, READ_BUF);
    const content = n > MAX_LOCK_BYTES ? "" : DECODER.decode(READ_BUF.subarray(0, n));
    if (n <= MAX_LOCK_BYTES && READ_BUF.subarray(0, n).every((b) => b === 0)) {
      // Without content: a power cut's leftover once it has aged (see the top of this file).
      const age = Date.now() - file.mtimeMs;
      return age > EMPTY_GRACE_MS || age < -EMPTY_GRACE_MS
        ? { state: "dead", content, file }
        : { state: "held", content };
    }
    const m = LOCK_CONTENT.exec(content);
    if (m === null) {
      return { state: "foreign", what: "it does not hold a lock token" };
    }
    const [, token, kind] = m as unknown as [string, string, string];
    if (kind === "k") {
      const kernel = tryKernelLock(fd, { id: file, path });
      if (kernel === "held") return { state: "held", content };
      if (kernel === "free") return { state: "dead", content, file };
    }
    const life = liveness(token);
    if (life === "dead") return { state: "dead", content, file };
    if (life === "unknown") {
      return {
        state: "unknown",
        why: token.startsWith("0-") ? "its holder could not name itself" : "another pid namespace",
      };
    }
    // Alive: but a holder keeps its lock file open while it holds it.
    return holdsOpen(token, { file, hint: `.${token}.` }) === false
      ? { state: "dead", content, file }
      : { state: "held", content };
  } catch (e) {
    if (errorKind(e) === "EAGAIN" || errorKind(e) === "EISDIR") {
      return { state: "foreign", what: "it is not a regular file" };
    }
    throw e;
  } finally {
    close(fd);
  }
}

/** Whether the regular file at `path` holds a lock's content (its staged name included). */
export function isLockFile(path: string): boolean {
  const content = contentOf(path);
  return content !== undefined && LOCK_CONTENT.test(content);
}

/** Removes the lock at `path` if its holder is dead; for sweeping a directory. */
export async function breakIfDead(path: string): Promise<void> {
  const seen = inspect(path);
  if (seen.state === "dead") {
    await breakLock(path, { dead: seen, key: "", signal: undefined, depth: 0 });
  }
}

async function breakLock(
  path: string,
  o: {
    readonly dead: { readonly content: string; readonly file: FileId };
    readonly key: string;
    readonly signal: AbortSignal | undefined;
    readonly depth: number;
  },
): Promise<void> {
  const { dead, key, signal, depth } = o;
  const hash = createHash("sha256")
    .update(`${dead.file.dev}:${dead.file.ino}:${dead.content}`)
    .digest("hex")
    .slice(0, 12);
  const right = await acquire(`${path}.b${hash}`, { key, signal, depth: depth + 1 });
  try {
    // Only the holder of the break-lock for this file removes it, and only while the name still
    // holds this very file: a lock taken since is another file (or the same inode reused, with
    // another nonce).
    const now = lstatId(path);
    if (
      now !== undefined && now.dev === dead.file.dev && now.ino === dead.file.ino &&
      contentOf(path) === dead.content
    ) {
      remove(path);
    }
  } finally {
    release(right);
  }
}

// The content of a lock file, read as `inspect` reads it; `undefined` when it is not one.
function contentOf(path: string): string | undefined {
  let fd: number;
  try {
    fd = openForRead(path);
  } catch {
    return undefined;
  }
  try {
    if (regularFileOf(fd) === undefined) return undefined;
    const n = readAll(fd, READ_BUF);
    return n > MAX_LOCK_BYTES ? undefined : DECODER.decode(READ_BUF.subarray(0, n));
  } finally {
    close(fd);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

function nameOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

function foreign(key: string, o: { path: string; what: string }): UnavailableError {
  const { path, what } = o;
  return busy(
    key,
    `the file ${quote(nameOf(path))} in the memory directory is not a lock this library wrote ` +
      `(${what}); an operator must remove it`,
  );
}

function busy(key: string, why: string): UnavailableError {
  return new UnavailableError(`[memory:file] Cannot write memory ${quote(key)}: ${why}`, { key });
}
