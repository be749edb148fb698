// The file backend's I/O, in one place so that it runs on Deno, Node and Bun alike. Everything is
// `node:fs`, which all three provide, except where Deno's own call is measurably faster: Deno's
// `lstatSync` and `readDirSync` skip its Node layer's conversion of every stat field (2.7 µs
// against 6.6 µs, and 0.8 µs against 1.9 µs an entry, on the project's machines), so on Deno those
// two use the `Deno` global when it is there. Nothing here follows a symlink or opens a file that
// is not regular unless the caller asked for it.
//
// Calls are synchronous except the fsyncs: a metadata call or a small read takes microseconds,
// far less than the thread-pool round trip of its asynchronous form, while a flush to disk can
// take milliseconds and must not hold the event loop.

import * as fs from "node:fs";
import { errorKind } from "../../store/text.ts";

const F = fs.constants;

/** Open flags for reading an entry: never through a symlink, never blocking on a FIFO. */
const READ_FLAGS = F.O_RDONLY | F.O_NOFOLLOW | F.O_NONBLOCK | F.O_NOCTTY;
/** Open flags for a new file: only if nothing has the name, never through a symlink. */
const CREATE_FLAGS = F.O_WRONLY | F.O_CREAT | F.O_EXCL | F.O_NOFOLLOW;
/** Open flags for appending to a file that exists: never through a symlink or blocking. */
const APPEND_FLAGS = F.O_WRONLY | F.O_APPEND | F.O_NOFOLLOW | F.O_NONBLOCK | F.O_NOCTTY;

/** What a name in a directory is, without following it; `null` when there is no such name. */
export type Kind = "file" | "dir" | "other" | null;

/** One name in a directory, and whether it is a regular file (a symlink never is). */
export interface Name {
  readonly name: string;
  readonly isFile: boolean;
}

interface DenoStat {
  isFile: boolean;
  isDirectory: boolean;
  isSymlink: boolean;
  isFifo?: boolean | null;
  isSocket?: boolean | null;
  dev: number;
  ino: number | null;
  size: number;
  nlink: number | null;
  mtime: Date | null;
}

interface DenoFs {
  lstatSync(path: string): DenoStat;
  statSync(path: string): DenoStat;
  readDirSync(path: string): Iterable<Name>;
}

// Deno's fast calls, looked up without naming the global, which Node and Bun do not have: its
// node:fs `lstatSync` and `fstatSync` convert every field (14 and 16-24 µs against Deno's 2.6 and
// 4.6 µs on the project's machines).
const DENO: DenoFs | undefined = (() => {
  const d = (globalThis as { Deno?: Partial<DenoFs> }).Deno;
  return typeof d?.lstatSync === "function" && typeof d.readDirSync === "function" &&
      typeof d.statSync === "function"
    ? d as DenoFs
    : undefined;
})();

/** What a name or an open file is. */
export interface Stat {
  readonly kind: "file" | "dir" | "link" | "fifo" | "socket" | "other";
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
  readonly nlink: number;
  readonly mtimeMs: number;
}

function fromDeno(st: DenoStat): Stat {
  const kind = st.isFile
    ? "file"
    : st.isDirectory
    ? "dir"
    : st.isSymlink
    ? "link"
    : st.isFifo
    ? "fifo"
    : st.isSocket
    ? "socket"
    : "other";
  return {
    kind,
    dev: st.dev,
    ino: st.ino ?? 0,
    size: st.size,
    nlink: st.nlink ?? 1,
    mtimeMs: st.mtime?.getTime() ?? 0,
  };
}

function fromNode(st: fs.Stats): Stat {
  const kind = st.isFile()
    ? "file"
    : st.isDirectory()
    ? "dir"
    : st.isSymbolicLink()
    ? "link"
    : st.isFIFO()
    ? "fifo"
    : st.isSocket()
    ? "socket"
    : "other";
  return { kind, dev: st.dev, ino: st.ino, size: st.size, nlink: st.nlink, mtimeMs: st.mtimeMs };
}

/** What `path` names, without following it; `null` when nothing is there. */
export function lstatOf(path: string): Stat | null {
  if (DENO === undefined) {
    const st = fs.lstatSync(path, { throwIfNoEntry: false });
    return st === undefined ? null : fromNode(st);
  }
  try {
    return fromDeno(DENO.lstatSync(path));
  } catch (e) {
    if (errorKind(e) === "ENOENT") return null;
    throw e;
  }
}

// Whether an open descriptor can be stat'ed through /proc (Deno with --allow-all: faster than
// its node:fs fstat); learnt once.
let fdStat: boolean | undefined;

/** What the open file `fd` is. */
export function fstatOf(fd: number): Stat {
  if (DENO !== undefined && fdStat !== false) {
    try {
      const st = fromDeno(DENO.statSync(`/proc/self/fd/${fd}`));
      fdStat = true;
      return st;
    } catch (e) {
      if (fdStat === true) throw e;
      fdStat = false;
    }
  }
  return fromNode(fs.fstatSync(fd));
}

/** What `path` is, without following a symlink. */
export function kindOf(path: string): Kind {
  // Only a missing name is "nothing"; a path through something that is not a directory (the
  // store's directory replaced by a file) is a failure, not an empty store.
  try {
    if (DENO !== undefined) {
      const st = DENO.lstatSync(path);
      return st.isFile ? "file" : st.isDirectory ? "dir" : "other";
    }
    const st = fs.lstatSync(path);
    return st.isFile() ? "file" : st.isDirectory() ? "dir" : "other";
  } catch (e) {
    if (errorKind(e) === "ENOENT") return null;
    throw e;
  }
}

/** What `kindOf` says of a name, from its `lstatOf` (`null`: nothing there). */
export function kindOfStat(st: Stat | null): Kind {
  return st === null ? null : st.kind === "file" ? "file" : st.kind === "dir" ? "dir" : "other";
}

/**
 * Like `kindOf`, but cheap when nothing is there (no error object is made), at the price of
 * answering `null` for a dangling symlink too. For callers whose next step fails safely on a
 * symlink anyway (`link` does).
 */
export function kindOfQuick(path: string): Kind {
  return fs.existsSync(path) ? kindOf(path) : null;
}

/** The names in a directory, with whether each is a regular file. */
export function listNames(dir: string): Name[] {
  if (DENO !== undefined) return [...DENO.readDirSync(dir)];
  return fs.readdirSync(dir, { withFileTypes: true }).map((d) => ({
    name: d.name,
    isFile: d.isFile(),
  }));
}

/** Opens a file for reading without following a symlink or blocking on a FIFO. */
export function openForRead(path: string): number {
  return fs.openSync(path, READ_FLAGS);
}

/**
 * Reads a regular file from `fd` into `buf`, from the file's offset `start`, until its end or the
 * end of `buf`; the number of bytes in `buf` after it. A read of a regular file returns less than
 * asked only at the end of the file, so one call usually does it all, without a second to find
 * the end (which would cost another call into the runtime).
 */
export function readAll(fd: number, buf: Uint8Array): number {
  return readAllFrom(fd, { buf, start: 0 });
}

/** `readAll` into `buf` from its index `start` on, which is also the file's offset read from. */
export function readAllFrom(fd: number, o: { buf: Uint8Array; start: number }): number {
  const { buf, start } = o;
  let n = start;
  while (n < buf.length) {
    const want = buf.length - n;
    const got = fs.readSync(fd, buf, n, want, n);
    n += got;
    if (got < want) break;
  }
  return n;
}

/** Closes a descriptor. */
export function close(fd: number): void {
  fs.closeSync(fd);
}

/**
 * Creates a new file with mode `o.mode` whatever the umask, writes `o.bytes` into it and returns its
 * open descriptor. Fails with `EEXIST` when the name is taken.
 */
export function createWith(path: string, o: { bytes: Uint8Array; mode: number }): number {
  return filled(fs.openSync(path, CREATE_FLAGS, o.mode), { path, ...o });
}

// A new file's mode set (the umask may have taken bits from the one given to open) and its bytes
// written; closed and removed when either fails.
function filled(fd: number, o: { path: string; bytes: Uint8Array; mode: number }): number {
  try {
    fs.fchmodSync(fd, o.mode);
    for (let off = 0; off < o.bytes.length;) off += fs.writeSync(fd, o.bytes, off);
  } catch (e) {
    fs.closeSync(fd);
    removeQuietly(o.path);
    throw e;
  }
  return fd;
}

/**
 * Appends `bytes` to the regular file `path` (never through a symlink, never blocking on a FIFO);
 * fails with `ENOENT` when nothing has the name.
 */
export function appendTo(path: string, bytes: Uint8Array): void {
  const fd = fs.openSync(path, APPEND_FLAGS);
  try {
    fs.writeSync(fd, bytes);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * `createWith` with the file made on the runtime's thread pool: a new inode waits for the journal
 * while other writes' flushes run, and the event loop need not wait with it.
 */
export function createWithAsync(
  path: string,
  o: { bytes: Uint8Array; mode: number },
): Promise<number> {
  return new Promise((resolve, reject) =>
    fs.open(path, CREATE_FLAGS, o.mode, (e, fd) => {
      if (e) return reject(e);
      try {
        resolve(filled(fd, { path, ...o }));
      } catch (e) {
        reject(e);
      }
    })
  );
}

/** Flushes a file's data (and the size needed to read it back) to disk. */
export function syncData(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (e) => e ? reject(e) : resolve()));
}

/** Flushes a directory's entries (names linked, renamed or removed in it) to disk. */
export function syncDir(dir: string): Promise<void> {
  const fd = fs.openSync(dir, F.O_RDONLY | F.O_DIRECTORY);
  return new Promise<void>((resolve, reject) => fs.fsync(fd, (e) => e ? reject(e) : resolve()))
    .finally(() => fs.closeSync(fd));
}

/** Gives `target` a second name; fails with `EEXIST` when `name` is taken. */
export function link(target: string, name: string): void {
  fs.linkSync(target, name);
}

/** Moves `from` to `to`, replacing what `to` names. */
export function rename(from: string, to: string): void {
  fs.renameSync(from, to);
}

/** Removes a name; `false` when it was already gone. */
export function remove(path: string): boolean {
  try {
    fs.unlinkSync(path);
    return true;
  } catch (e) {
    if (errorKind(e) === "ENOENT") return false;
    throw e;
  }
}

/** Removes a name, ignoring every failure (a leftover temp file is invisible and swept later). */
export function removeQuietly(path: string): void {
  try {
    fs.unlinkSync(path);
  } catch {
    // Already gone, or the directory is unwritable.
  }
}

/**
 * The text of one of the kernel's small files under /proc, or `undefined` when it cannot be read
 * for any reason. Never for a name in a memory directory: this follows symlinks and blocks on a
 * FIFO (`openForRead` is for those).
 */
export function readSmallText(path: string): string | undefined {
  return readTextIfExists(path) ?? undefined;
}

/**
 * The text of one of the kernel's small files under /proc; `null` when it does not exist,
 * `undefined` when it cannot be read. Not for a name in a memory directory (see `readSmallText`).
 */
export function readTextIfExists(path: string): string | null | undefined {
  try {
    return fs.readFileSync(path, "utf8");
  } catch (e) {
    return errorKind(e) === "ENOENT" ? null : undefined;
  }
}

/** The target of a symlink, or `undefined` when it cannot be read. */
export function readLinkOrUndefined(path: string): string | undefined {
  try {
    return fs.readlinkSync(path);
  } catch {
    return undefined;
  }
}

/** Creates `dir` and any missing parents; `dir` itself, when made here, gets exactly `mode`. */
export function makeDir(dir: string, mode: number): void {
  // The umask may have taken bits from the mode of a directory made here; one that already
  // existed keeps the mode its operator gave it.
  if (fs.mkdirSync(dir, { recursive: true, mode }) !== undefined) fs.chmodSync(dir, mode);
}

/** Creates `dir` (its parent must exist) with exactly `mode`; false when it already exists. */
export function makeSubdir(dir: string, mode: number): boolean {
  try {
    fs.mkdirSync(dir, { mode });
  } catch (e) {
    if (errorKind(e) === "EEXIST") return false;
    throw e;
  }
  fs.chmodSync(dir, mode);
  return true;
}

/** The canonical path of `path` (symlinks resolved). */
export function realPath(path: string): string {
  return fs.realpathSync(path);
}

/** What identifies a directory: its device, inode and birth time (0 where unknown). */
export function dirIdentity(dir: string): { dev: number; ino: number; birth: number } | null {
  const st = fs.statSync(dir);
  if (!st.isDirectory()) return null;
  return { dev: st.dev, ino: st.ino, birth: Number.isFinite(st.birthtimeMs) ? st.birthtimeMs : 0 };
}

/**
 * Which file `path` names now, without following it: device, inode, size and modification time,
 * or `null` when nothing is there. A file replaced by a rename, or written in place, reads
 * differently.
 */
export function identityOf(path: string): string | null {
  const st = lstatOf(path);
  return st === null ? null : identityOfStat(st);
}

/** `identityOf` from a stat already taken. */
export function identityOfStat(st: Stat): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
}

/** The `fileIdOf` of the file an `identityOf` names. */
export function fileIdOfIdentity(identity: string): string {
  return identity.split(":", 2).join(":");
}

/** What `factsOf` calls a regular file's identity (`<dev>:<ino>`), without following `path`. */
export function fileIdOf(path: string): string | undefined {
  // Most names asked about are absent: a failed lstat makes an error object (18 µs on Deno).
  if (!fs.existsSync(path)) return undefined;
  return fileIdOfStat(lstatOf(path));
}

/** `fileIdOf` from an lstat already taken (`undefined` unless it is a regular file). */
export function fileIdOfStat(st: Stat | null): string | undefined {
  return st?.kind === "file" ? `${st.dev}:${st.ino}` : undefined;
}

/** Removes `path` if it is still the regular file `id` (`fileIdOf`); never throws. */
export function removeIfSame(path: string, id: string): void {
  try {
    if (fileIdOf(path) === id) fs.unlinkSync(path);
  } catch {
    // Gone already, or left for the next sweep.
  }
}

/** A file's device and inode. */
export interface FileId {
  readonly dev: number;
  readonly ino: number;
}

/** The device and inode of what `path` names, following symlinks; `undefined` when unknown. */
export function statOf(path: string): FileId | undefined {
  try {
    const st = DENO?.statSync(path) ?? fs.statSync(path);
    return { dev: st.dev, ino: st.ino ?? 0 };
  } catch {
    return undefined;
  }
}

/** The device `path` is on, following symlinks; `undefined` when it cannot be told. */
export function deviceOf(path: string): number | undefined {
  return statOf(path)?.dev;
}

/** An open regular file's device, inode and size; `undefined` when `fd` is not a regular file. */
export function regularFileOf(
  fd: number,
): (FileId & { readonly size: number; readonly mtimeMs: number }) | undefined {
  const st = fstatOf(fd);
  return st.kind === "file"
    ? { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs }
    : undefined;
}

/**
 * An open file's identity (`<dev>:<ino>`) and number of names, or what it is in words when it is
 * not a regular file.
 */
export function factsOf(fd: number): { id: string; nlink: number } | string {
  const st = fstatOf(fd);
  if (st.kind === "file") return { id: `${st.dev}:${st.ino}`, nlink: st.nlink };
  return st.kind === "dir" ? "a directory" : "not a regular file";
}

/** What `path` is, in words, without following it (`null`: nothing; "file": a regular file). */
export function describeName(path: string): string | null {
  const kind = lstatOf(path)?.kind;
  if (kind === undefined) return null;
  if (kind === "file") return "file";
  if (kind === "dir") return "a directory";
  if (kind === "link") return "a symbolic link";
  if (kind === "fifo") return "a FIFO";
  if (kind === "socket") return "a socket";
  return "a device";
}

/** The device and inode `path` names, without following it; `undefined` when nothing is there. */
export function lstatId(path: string): FileId | undefined {
  const st = lstatOf(path);
  return st === null ? undefined : { dev: st.dev, ino: st.ino };
}

/** A regular file's modification time in ms, or `undefined` when it is not one. */
export function fileMtime(path: string): number | undefined {
  const st = lstatOf(path);
  return st?.kind === "file" ? st.mtimeMs : undefined;
}
