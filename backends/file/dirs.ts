// Directories below the store's (`.history`, a key's folder), opened so that no I/O through them
// follows a symlink in any component: each is opened with O_NOFOLLOW | O_DIRECTORY relative to
// the one above it, and names in it are reached through `/proc/self/fd/<fd>/<name>`, which the
// kernel resolves from the open directory itself, whatever has since been renamed or planted
// under its path. Where /proc cannot be used (no /proc, or Deno without --allow-all, whose
// permission checks refuse /proc/self/fd), each component is checked with lstat before every use
// instead, which leaves a window (docs/design/history.md).

import * as fs from "node:fs";
import { errorKind } from "../../store/text.ts";
import { deviceOf, fstatOf, lstatOf } from "./fs.ts";

const F = fs.constants;
const DIR_FLAGS = F.O_RDONLY | F.O_DIRECTORY | F.O_NOFOLLOW;
const DIR_MODE = 0o700;

/** Something other than a directory of ours where one must be. */
export class NotOurDir extends Error {
  /** The name relative to the store's directory, e.g. `.history/k`. */
  readonly where: string;
  /** What is there, in words ("a symbolic link", "a file", "another file system"). */
  readonly what: string;

  constructor(where: string, what: string) {
    super(`${where} is ${what}`);
    this.where = where;
    this.what = what;
  }
}

/** An open directory below the store's. Close it once done. */
export interface Dir {
  /** The name relative to the store's directory (for messages and reports). */
  readonly where: string;
  /** The device it is on. */
  readonly dev: number;
  /** A path to `name` in this directory that resolves through no symlink (see the top). */
  at(name: string): string;
  /** A path to this directory itself, resolved as `at` resolves. */
  self(): string;
  close(): void;
}

// Whether this process can reach names through /proc/self/fd (learnt once).
let viaFd: boolean | undefined;

function fdPaths(probe: number): boolean {
  if (viaFd !== undefined) return viaFd;
  try {
    fs.closeSync(fs.openSync(`/proc/self/fd/${probe}`, DIR_FLAGS & ~F.O_NOFOLLOW));
    viaFd = true;
  } catch {
    viaFd = false;
  }
  return viaFd;
}

/** Whether directories are reached through /proc/self/fd here (false: checked paths). */
export function usesFdPaths(root: string): boolean {
  if (viaFd !== undefined) return viaFd;
  const fd = fs.openSync(root, F.O_RDONLY | F.O_DIRECTORY);
  try {
    return fdPaths(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Which directory `openDir` opens: a name in its parent, made when missing with `create`. */
export type DirName = string | {
  readonly name: string;
  readonly create?: boolean;
  /** Called when it made the directory (whose parent then needs a flush). */
  readonly made?: () => void;
};

/**
 * Opens `name` (one component) in `parent` (the store's directory, a canonical path, or an open
 * `Dir`) as a directory, never through a symlink, on the store's device, making it (mode 0700)
 * when missing with `create`. `undefined` when it is missing and not made.
 *
 * @throws {NotOurDir} when something else has the name.
 */
export function openDir(parent: string | Dir, which: DirName): Dir | undefined {
  const opts = typeof which === "string" ? { name: which } : which;
  const name = opts.name;
  const where = typeof parent === "string" ? name : `${parent.where}/${name}`;
  const path = typeof parent === "string" ? `${parent}/${name}` : parent.at(name);
  // A missing name is common (a key's first write), and a failed open costs an error object; a
  // dangling symlink looks missing too, and is met by the mkdir or the open after it.
  if (!fs.existsSync(path)) {
    if (opts.create !== true) return undefined;
    if (makeDir(path)) opts.made?.();
  }
  let fd: number;
  try {
    fd = fs.openSync(path, DIR_FLAGS);
  } catch (e) {
    const code = errorKind(e);
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP" || code === "ENOTDIR") throw new NotOurDir(where, describe(path));
    throw e;
  }
  let dev: number;
  try {
    const st = fstatOf(fd);
    dev = st.dev;
    const device = typeof parent === "string" ? rootDevice(parent) : parent.dev;
    if (st.kind !== "dir") throw new NotOurDir(where, describe(path));
    if (dev !== device) throw new NotOurDir(where, "another file system mounted there");
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
  if (fdPaths(fd)) return fdDir(fd, { where, dev });
  fs.closeSync(fd);
  return checkedDir(path, { where, parent, dev });
}

// The store directory's device, looked up on every open: a file system mounted again (after a
// reboot or a power cut) has another device number, and a cached one would refuse it.
function rootDevice(root: string): number {
  return deviceOf(root) ?? fs.statSync(root).dev;
}

function makeDir(path: string): boolean {
  try {
    fs.mkdirSync(path, { mode: DIR_MODE });
  } catch (e) {
    if (errorKind(e) === "EEXIST") return false;
    throw e;
  }
  // The umask may have taken bits from the mode; what mkdir made is ours, not a planted link.
  fs.chmodSync(path, DIR_MODE);
  return true;
}

function fdDir(fd: number, { where, dev }: { where: string; dev: number }): Dir {
  let open = true;
  return {
    where,
    dev,
    at: (name) => `/proc/self/fd/${fd}/${name}`,
    self: () => `/proc/self/fd/${fd}`,
    close: () => {
      if (open) fs.closeSync(fd);
      open = false;
    },
  };
}

// Without /proc: the path, with every component below the store's directory checked to be the
// directory it was when opened (no symlink, same inode) before each use.
function checkedDir(
  path: string,
  { where, parent, dev }: { where: string; parent: string | Dir; dev: number },
): Dir {
  const id = identity(path);
  const check = () => {
    if (typeof parent !== "string") parent.self();
    if (identity(path) !== id) throw new NotOurDir(where, "replaced while in use");
  };
  return {
    where,
    dev,
    at: (name) => {
      check();
      return `${path}/${name}`;
    },
    self: () => {
      check();
      return path;
    },
    close: () => {},
  };
}

function identity(path: string): string {
  const st = lstatOf(path);
  return st?.kind === "dir" ? `${st.dev}:${st.ino}` : "";
}

function describe(path: string): string {
  const kind = lstatOf(path)?.kind;
  if (kind === undefined) return "gone";
  if (kind === "link") return "a symbolic link";
  if (kind === "dir") return "a directory";
  if (kind === "file") return "a file";
  return "not a directory";
}

/** Runs `fn` with `dir`, closing it afterwards whatever `fn` does. */
export function withDir<T>(dir: Dir, fn: (dir: Dir) => T): T {
  try {
    return fn(dir);
  } finally {
    dir.close();
  }
}

/** The names in `dir`, with whether each is a regular file (a symlink never is). */
export function namesIn(dir: Dir): { name: string; isFile: boolean; isDir: boolean }[] {
  return fs.readdirSync(dir.self(), { withFileTypes: true }).map((d) => ({
    name: d.name,
    isFile: d.isFile(),
    isDir: d.isDirectory(),
  }));
}

/** Flushes `dir`'s entries to disk. */
export function syncOpenDir(dir: Dir): Promise<void> {
  const fd = fs.openSync(dir.self(), F.O_RDONLY | F.O_DIRECTORY);
  return new Promise<void>((resolve, reject) => fs.fsync(fd, (e) => e ? reject(e) : resolve()))
    .finally(() => fs.closeSync(fd));
}
