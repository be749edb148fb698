// Kernel-held locks (`flock`), where the runtime offers them: Deno's `FsFile.tryLockSync`. Node
// and Bun have none, so this is an addition to the portable lock scheme, never a replacement: a
// lock file says whether its holder also holds a kernel lock on it, and only a judge that can try
// one (Deno) judges such a holder that way. The kernel drops a holder's flock when it dies, in any
// pid namespace, so a Deno judge tells a dead holder from a live one in another container too,
// without /proc.
//
// Looked up without naming the Deno global, which Node and Bun do not have.

import { type FileId, kindOf } from "./fs.ts";

interface DenoFile {
  writeSync(bytes: Uint8Array): number;
  seekSync(offset: number, whence: number): number;
  tryLockSync(exclusive?: boolean): boolean;
  statSync(): { dev: number; ino: number | null };
  close(): void;
}

interface DenoOpen {
  openSync(
    path: string,
    options: { read?: boolean; write?: boolean; createNew?: boolean; mode?: number },
  ): DenoFile;
}

const DENO: DenoOpen | undefined = (() => {
  const d = (globalThis as { Deno?: Partial<DenoOpen> & { FsFile?: { prototype: object } } })
    .Deno;
  return typeof d?.openSync === "function" &&
      typeof (d.FsFile?.prototype as Partial<DenoFile> | undefined)?.tryLockSync === "function"
    ? d as DenoOpen
    : undefined;
})();

/** A file holding its content, with this process's kernel lock on it. */
export interface KernelFile {
  readonly id: FileId;
  /** Writes `bytes` over the file's start (as long as what it holds: the length never changes). */
  rewrite(bytes: Uint8Array): void;
  /** Drops the kernel lock and closes the file. */
  close(): void;
}

/** Whether this runtime can take and try kernel locks. */
export const HAS_KERNEL_LOCKS: boolean = DENO !== undefined;

/**
 * Creates `path` (only if nothing has the name; never through a symlink) holding `bytes`, and
 * takes its kernel lock. `undefined` when this runtime has no kernel locks. Throws what creating
 * throws (`EEXIST` and the rest); a file made but not locked is closed, and left for the caller
 * to remove.
 */
export function createLocked(
  path: string,
  o: { bytes: Uint8Array; mode: number },
): KernelFile | undefined {
  const { bytes, mode } = o;
  if (DENO === undefined) return undefined;
  const file = DENO.openSync(path, { write: true, createNew: true, mode });
  try {
    for (let off = 0; off < bytes.length;) off += file.writeSync(bytes.subarray(off));
    // A file nobody else has opened yet: its lock is free, unless someone is racing on its name.
    if (!file.tryLockSync(true)) throw Object.assign(new Error("locked"), { code: "EAGAIN" });
    const st = file.statSync();
    return kernelFile(file, { dev: st.dev, ino: st.ino ?? 0 });
  } catch (e) {
    file.close();
    throw e;
  }
}

/**
 * Opens the regular file `path` again, if it is still the file `id` (checked on the open file
 * before anything is written), and takes its kernel lock: `"busy"` when someone holds that lock
 * (a judge trying it for an instant), `undefined` when the name is not that file any more or this
 * runtime has no kernel locks. The caller checks first that the name is a regular file, so the
 * open does not wait on a FIFO swapped in; opening for writing too never does.
 */
export function reopenLocked(path: string, id: FileId): KernelFile | "busy" | undefined {
  if (DENO === undefined) return undefined;
  let file: DenoFile;
  try {
    file = DENO.openSync(path, { read: true, write: true });
  } catch {
    return undefined;
  }
  try {
    const st = file.statSync();
    if (st.dev !== id.dev || st.ino !== id.ino) {
      file.close();
      return undefined;
    }
    if (!file.tryLockSync(true)) {
      file.close();
      return "busy";
    }
    return kernelFile(file, id);
  } catch {
    file.close();
    return undefined;
  }
}

function kernelFile(file: DenoFile, id: FileId): KernelFile {
  return {
    id,
    rewrite: (bytes) => {
      file.seekSync(0, 0);
      for (let off = 0; off < bytes.length;) off += file.writeSync(bytes.subarray(off));
    },
    close: () => file.close(),
  };
}

/**
 * Tries the kernel lock of the file open on `fd` (a regular file whose device and inode are `id`,
 * named `path`): "held" when another open file holds it, "free" when nobody does (it was taken
 * and dropped at once), `undefined` when this runtime cannot tell. Never blocks: the file is
 * reopened through the descriptor itself where /proc allows it, else by its name after checking
 * that it is a regular file, and opened for writing too, which does not wait on a FIFO swapped in.
 */
export function tryKernelLock(
  fd: number,
  o: { id: FileId; path: string },
): "held" | "free" | undefined {
  const { id, path } = o;
  if (DENO === undefined) return undefined;
  let file: DenoFile;
  try {
    file = DENO.openSync(`/proc/self/fd/${fd}`, { read: true });
  } catch {
    try {
      if (kindOf(path) !== "file") return undefined;
      file = DENO.openSync(path, { read: true, write: true });
    } catch {
      return undefined;
    }
  }
  try {
    const st = file.statSync();
    if (st.dev !== id.dev || st.ino !== id.ino) return undefined;
    return file.tryLockSync(true) ? "free" : "held";
  } catch {
    return undefined;
  } finally {
    file.close();
  }
}
