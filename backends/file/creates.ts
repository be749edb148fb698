// The store's create marks: `.creates`, a file every create of this library appends one byte to
// once its entry is linked, whatever the handle, process or runtime. A capacity count taken after
// a look at the file stays good while the file is the same (its first 16 bytes, written once when
// it is made) and has grown only by the counting handle's own marks: no other create has linked
// since, so no directory pass is needed. Why this is exact: docs/design/file-locks.md.
//
// The file is remade, not trimmed, once it holds MAX_BYTES: a look then sees other first bytes
// and counts again. Nothing here is flushed: after a crash every handle counts anew.

import { errorKind } from "../../store/text.ts";
import { appendTo, close, createWith, fstatOf, openForRead, readAll, remove } from "./fs.ts";
import { CREATES_NAME } from "./names.ts";
import { randomHex } from "../../store/random.ts";

/** The file's first bytes: who made this very file. */
const ID_BYTES = 16;
/** Past this size a look removes the file (the next mark makes a new one). */
export const MAX_BYTES = 64 * 1024;
const MARK = new Uint8Array([0x2e]);
const MODE = 0o600;
const ID_BUF = new Uint8Array(ID_BYTES);
const DECODER = new TextDecoder();

/** What a look at the marks saw: the file's first bytes and its size. */
export interface MarksSeen {
  readonly id: string;
  readonly size: number;
}

/** The create marks of one memory directory. */
export class CreateMarks {
  readonly #path: string;

  constructor(root: string) {
    this.#path = `${root}/${CREATES_NAME}`;
  }

  /**
   * What the marks are now; `undefined` when they cannot vouch for anything (no file yet, one being
   * made, or one that is not a regular file this process can read). A file past MAX_BYTES is
   * removed and answers `undefined`.
   */
  look(): MarksSeen | undefined {
    let fd: number;
    try {
      fd = openForRead(this.#path);
    } catch {
      return undefined;
    }
    try {
      const st = fstatOf(fd);
      if (st.kind !== "file" || st.size < ID_BYTES) return undefined;
      if (st.size >= MAX_BYTES) {
        remove(this.#path);
        return undefined;
      }
      if (readAll(fd, ID_BUF) < ID_BYTES) return undefined;
      return { id: DECODER.decode(ID_BUF), size: st.size };
    } catch {
      return undefined;
    } finally {
      close(fd);
    }
  }

  /**
   * Marks one create, after its entry is linked. A mark that cannot be made removes the file, so
   * that every other handle counts again instead of trusting marks that miss this create.
   */
  mark(): void {
    for (let tries = 0; tries < 3; tries++) {
      try {
        appendTo(this.#path, MARK);
        return;
      } catch (e) {
        if (errorKind(e) !== "ENOENT") break;
      }
      try {
        close(createWith(this.#path, { bytes: newId(), mode: MODE }));
        // The maker's own mark goes after its first bytes, as every other mark does.
      } catch (e) {
        if (errorKind(e) !== "EEXIST") break;
      }
    }
    try {
      remove(this.#path);
    } catch {
      // A directory this process cannot change: nobody's marks vouch for a count there.
    }
  }
}

function newId(): Uint8Array {
  return new TextEncoder().encode(randomHex(ID_BYTES / 2));
}
