// Reading entries from a memory directory: a whole entry for read(), only its header for list().
// Only a regular file is ever opened (opening a FIFO would release a writer blocked on it, and
// opening a device can act on it): an lstat comes first, and the open flags refuse a symlink and
// never block, should the name be swapped in between.

import { CorruptError } from "../../store/errors.ts";
import { MAX_ENTRY_BYTES } from "../../store/limits.ts";
import { decodeUtf8, MAX_HEADER_BYTES, parseHeader } from "../../store/serialize.ts";
import { errorKind, quote } from "../../store/_text.ts";
import { close, kindOf, openForRead, readAll } from "./fs.ts";

// Most headers fit in the first read; a long description takes a second.
const HEADER_PROBE_BYTES = 1024;
const HEADER_READ_BYTES = MAX_HEADER_BYTES + 5;
// What `open` fails with when the name is gone, is a symlink (ELOOP), or is a socket or a device
// without a driver (ENXIO, ENODEV): no memory file either way.
const NOT_A_MEMORY_FILE: ReadonlySet<string> = new Set([
  "ENOENT",
  "ELOOP",
  "ENOTDIR",
  "ENXIO",
  "ENODEV",
]);
const CLOSE = new TextEncoder().encode("\n---\n");
// Reads are synchronous from open to decode, so one buffer serves every read of the process: one
// byte over the largest valid entry, to tell a file that is too large.
const ENTRY_BUF = new Uint8Array(MAX_ENTRY_BYTES + 1);
const HEADER_BUF = new Uint8Array(HEADER_READ_BYTES);

/**
 * The bytes a key's file holds now, or `undefined` when there is no regular file under its name.
 * The bytes live in a buffer the next read reuses: use them before anything else reads.
 */
export function readCurrent(path: string, key: string): Uint8Array | undefined {
  if (kindOf(path) !== "file") return undefined;
  let fd: number;
  try {
    fd = openForRead(path);
  } catch (e) {
    if (NOT_A_MEMORY_FILE.has(errorKind(e))) return undefined;
    throw e;
  }
  let n: number;
  try {
    n = readAll(fd, ENTRY_BUF);
  } finally {
    close(fd);
  }
  if (n > MAX_ENTRY_BYTES) {
    throw new CorruptError(
      `[memory:file] Cannot parse memory ${
        quote(key)
      }: the file has more than ${MAX_ENTRY_BYTES} bytes, the limit of an entry`,
      { key },
    );
  }
  return ENTRY_BUF.subarray(0, n);
}

/**
 * The description in a key's header, reading as little of the file as the header needs.
 * `undefined` when the file vanished, may not be read or has no valid header: listing skips it,
 * as one bad file must not hide every other memory (read() of it reports the failure).
 */
export function readDescription(path: string, key: string): string | undefined {
  let fd: number;
  try {
    fd = openForRead(path);
  } catch (e) {
    const code = errorKind(e);
    if (NOT_A_MEMORY_FILE.has(code) || code === "EACCES" || code === "EPERM") return undefined;
    throw e;
  }
  try {
    let n = readAll(fd, HEADER_BUF.subarray(0, HEADER_PROBE_BYTES));
    let end = indexOfClose(HEADER_BUF, n);
    if (end < 0 && n === HEADER_PROBE_BYTES) {
      n = readAll(fd, HEADER_BUF, n);
      end = indexOfClose(HEADER_BUF, n);
    }
    const header = HEADER_BUF.subarray(0, end < 0 ? n : end + CLOSE.length);
    return parseHeader(decodeUtf8(header, key), key).description;
  } catch (e) {
    if (e instanceof CorruptError) return undefined;
    // A name that is not a regular file after all (swapped in after the directory was read).
    if (errorKind(e) === "EISDIR" || errorKind(e) === "EAGAIN") return undefined;
    throw e;
  } finally {
    close(fd);
  }
}

function indexOfClose(bytes: Uint8Array, length: number): number {
  // The header opens with "---\n", so its close can start at byte 3 at the earliest.
  for (let i = bytes.indexOf(0x0a, 3); i >= 0 && i + CLOSE.length <= length;) {
    let match = true;
    for (let j = 1; j < CLOSE.length; j++) {
      if (bytes[i + j] !== CLOSE[j]) {
        match = false;
        break;
      }
    }
    if (match) return i;
    i = bytes.indexOf(0x0a, i + 1);
  }
  return -1;
}
