// The file a lock's name is linked to (lock.ts). Where the runtime has kernel locks (Deno), one
// file per process and directory serves every lock this process takes there: a new file costs an
// inode, which on ext4 waits for the journal while fsyncs run (150 to 250 µs on the project's
// machines), and a link costs a few µs. Before each link its content is written again with a new
// nonce, so a lock's content never repeats (breaking relies on it); it is open, with its kernel
// lock, while any lock linked to it is held, and closed as soon as none is, so nothing stays open
// between writes. Its name carries this process's token like any temp file's, so the sweep removes
// it once this process is dead. Elsewhere (Node, Bun) each lock has a file of its own, as before.

import { close, createWith, type FileId, lstatOf, regularFileOf, removeQuietly } from "./fs.ts";
import { createLocked, HAS_KERNEL_LOCKS, type KernelFile, reopenLocked } from "./kernel.ts";
import { selfToken } from "./process.ts";
import { SHARED_LOCK_STEM, TEMP_SUFFIX } from "./names.ts";

const MODE = 0o600;
const ENCODER = new TextEncoder();

/** A lock's file, written and open, ready to be linked under the lock's name. */
export interface LockFile {
  /** The name to link from. */
  readonly temp: string;
  readonly content: string;
  readonly file: FileId;
  /** Drops this lock's hold on the file (and the file, or its kernel lock, with the last). */
  readonly close: () => void;
  /** Whether the file's name goes once it is linked (a file of this lock's own). */
  readonly own: boolean;
  /** Marks the lock at `path` taken with this file. */
  readonly linked: () => void;
  /**
   * Whether `path` names this process's shared file for no lock it holds (a name its release
   * could not remove): every judge takes it for held while this process holds the file's kernel
   * lock, so only this process can tell, and remove it.
   */
  readonly strayAt: () => boolean;
}

// One directory's shared file, and how many locks of this process hold it.
interface Shared {
  readonly path: string;
  readonly id: FileId;
  open: KernelFile | undefined;
  holds: number;
  /** The lock names this process has linked to it and not released. */
  readonly names: Set<string>;
}

const SHARED = new Map<string, Shared>();

/** A file for a new lock at `path` (`.<key>.lock` or a break-lock) holding a new content. */
export function lockFileFor(path: string): LockFile {
  const token = selfToken();
  const nonce = nextNonce();
  const content = `${token} ${nonce} ${HAS_KERNEL_LOCKS ? "k" : "p"}`;
  const slash = path.lastIndexOf("/");
  const dir = path.slice(0, slash);
  const bytes = ENCODER.encode(content);
  if (HAS_KERNEL_LOCKS) {
    const shared = holdShared(dir, { token, bytes });
    if (shared !== undefined) {
      let named = false;
      return {
        temp: shared.path,
        content,
        file: shared.id,
        close: () => {
          if (named) shared.names.delete(path);
          letGo(shared);
        },
        own: false,
        linked: () => {
          named = true;
          shared.names.add(path);
        },
        strayAt: () => {
          const st = lstatOf(path);
          return st !== null && st.dev === shared.id.dev && st.ino === shared.id.ino &&
            !shared.names.has(path);
        },
      };
    }
  }
  const temp = `${dir}/${path.slice(slash + 1, slash + 151)}.${token}.${nonce}${TEMP_SUFFIX}`;
  return {
    ...ownFile(temp, bytes),
    temp,
    content,
    own: true,
    linked: () => {},
    strayAt: () => false,
  };
}

// This directory's shared file, held once more and holding `bytes`; undefined when it cannot be
// had now (this lock then gets a file of its own).
function holdShared(dir: string, o: { token: string; bytes: Uint8Array }): Shared | undefined {
  let shared = SHARED.get(dir);
  if (shared !== undefined && shared.open === undefined) {
    // Closed since its last lock: open it again, only if its name is still that very file.
    const st = lstatOf(shared.path);
    const open = st !== null && st.kind === "file" && st.dev === shared.id.dev &&
        st.ino === shared.id.ino
      ? reopenLocked(shared.path, shared.id)
      : undefined;
    if (open === "busy") return undefined;
    if (open === undefined) {
      SHARED.delete(dir);
      shared = undefined;
    } else shared.open = open;
  }
  if (shared === undefined) {
    const path = `${dir}/${SHARED_LOCK_STEM}.${o.token}.${nextNonce()}${TEMP_SUFFIX}`;
    let made: KernelFile | undefined;
    try {
      made = createLocked(path, { bytes: o.bytes, mode: MODE });
    } catch {
      removeQuietly(path);
      return undefined;
    }
    if (made === undefined) return undefined;
    shared = { path, id: made.id, open: made, holds: 0, names: new Set() };
    SHARED.set(dir, shared);
    removeAtExit();
  } else {
    try {
      shared.open!.rewrite(o.bytes);
    } catch {
      if (shared.holds === 0) closeShared(shared);
      return undefined;
    }
  }
  shared.holds++;
  return shared;
}

/** Forgets the shared file of `dir` whose name has gone (its holders keep it until they let go). */
export function forgetShared(file: LockFile): void {
  const dir = file.temp.slice(0, file.temp.lastIndexOf("/"));
  const shared = SHARED.get(dir);
  if (shared !== undefined && shared.path === file.temp) SHARED.delete(dir);
}

function letGo(shared: Shared): void {
  if (--shared.holds === 0) closeShared(shared);
}

function closeShared(shared: Shared): void {
  try {
    shared.open?.close();
  } finally {
    shared.open = undefined;
  }
}

// At a normal exit this process's shared files go (after a crash, the sweep removes them).
let exitHook = false;
function removeAtExit(): void {
  if (exitHook) return;
  exitHook = true;
  const target = globalThis as { addEventListener?: (type: string, fn: () => void) => void };
  target.addEventListener?.("unload", () => {
    for (const shared of SHARED.values()) if (shared.holds === 0) removeQuietly(shared.path);
  });
}

// A lock's file of its own (the scheme without a shared file).
function ownFile(temp: string, bytes: Uint8Array): { file: FileId; close: () => void } {
  try {
    const kernel = createLocked(temp, { bytes, mode: MODE });
    if (kernel !== undefined) return { file: kernel.id, close: kernel.close };
    const fd = createWith(temp, { bytes, mode: MODE });
    const file = regularFileOf(fd)!;
    return { file, close: () => close(fd) };
  } catch (e) {
    removeQuietly(temp);
    throw e;
  }
}

// A lock's nonce: unique among this process's locks (a counter after a random start), so that a
// lock's content never repeats, which breaking relies on (lock.ts's breakLock).
let nonces = -1;
function nextNonce(): string {
  if (nonces < 0) nonces = crypto.getRandomValues(new Uint32Array(1))[0]! * 0x100;
  nonces = (nonces + 1) % 0x1000000000000;
  return nonces.toString(16).padStart(12, "0");
}
