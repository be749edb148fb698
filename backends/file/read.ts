// Reading entries from a memory directory: a whole entry for read(), only its header for list().
// Only a regular file is ever read, and never through a symlink: the open refuses a symlink and
// never blocks, and a positioned read refuses what is not a file (a FIFO has no offset, a directory
// no bytes); whatever still reads as no entry at all (nothing, or more than any entry) is stat'ed
// on its open descriptor before it is called damaged, so a device reads as no memory too.

import { CorruptError } from "../../store/errors.ts";
import { MAX_ENTRY_BYTES } from "../../store/limits.ts";
import { decodeUtf8, MAX_HEADER_BYTES, parseHeader } from "../../store/serialize.ts";
import { errorKind, quote } from "../../store/text.ts";
import { close, factsOf, fstatOf, openForRead, readAll, readAllFrom } from "./fs.ts";
import { hasRecord, MAX_RECORD_BYTES, splitVersion, type VersionRecord } from "./envelope.ts";

// Most headers (and version records) fit in the first read; a long description takes a second.
const HEADER_PROBE_BYTES = 1024;
const HEADER_READ_BYTES = MAX_RECORD_BYTES + MAX_HEADER_BYTES + 5;
/** The most bytes a key's file may hold: an entry and its version record. */
export const MAX_FILE_BYTES = MAX_ENTRY_BYTES + MAX_RECORD_BYTES;
// What `open` fails with when the name is gone, is a symlink (ELOOP), or is a socket or a device
// without a driver (ENXIO, ENODEV): no memory file either way.
const NOT_A_MEMORY_FILE: ReadonlySet<string> = new Set([
  "ENOENT",
  "ELOOP",
  "ENOTDIR",
  "ENXIO",
  "ENODEV",
]);
// What a positioned read of something other than a regular file fails with: a FIFO or a socket
// (ESPIPE), a directory (EISDIR), a file that cannot be read at an offset (EINVAL).
const NOT_A_FILE_READ: ReadonlySet<string> = new Set(["ESPIPE", "EISDIR", "EINVAL"]);
const CLOSE = new TextEncoder().encode("\n---\n");
// Reads are synchronous from open to decode, so one buffer serves every read of the process: one
// byte over the largest valid file, to tell a file that is too large.
const ENTRY_BUF = new Uint8Array(MAX_FILE_BYTES + 1);
const HEADER_BUF = new Uint8Array(HEADER_READ_BYTES);

/**
 * The bytes a key's file holds now, or `undefined` when there is no regular file under its name.
 * The bytes live in a buffer the next read reuses: use them before anything else reads.
 * `listed`: the caller has just seen a regular file under this name in the directory's listing.
 */
export function readCurrent(
  path: string,
  o: { key: string; listed?: boolean },
): Uint8Array | undefined {
  const { key, listed = false } = o;
  let fd: number;
  try {
    fd = openForRead(path);
  } catch (e) {
    const kind = errorKind(e);
    // Outside a listing, ENOTDIR means the store's directory is not one: a failure, not a
    // missing memory.
    if (NOT_A_MEMORY_FILE.has(kind) && (listed || kind !== "ENOTDIR")) return undefined;
    throw e;
  }
  let n: number;
  try {
    try {
      n = readAll(fd, ENTRY_BUF);
    } catch (e) {
      if (NOT_A_FILE_READ.has(errorKind(e)) && !isRegular(fd)) return undefined;
      throw e;
    }
    // No entry is empty, and none is this large: a device reads so, and is no memory.
    if ((n === 0 || n > MAX_FILE_BYTES) && !isRegular(fd)) return undefined;
  } finally {
    close(fd);
  }
  if (n > MAX_FILE_BYTES) {
    throw new CorruptError(
      `[memory:file] Cannot parse memory ${
        quote(key)
      }: the file has more than ${MAX_FILE_BYTES} bytes, the limit of an entry and its version record`,
      { key },
    );
  }
  return ENTRY_BUF.subarray(0, n);
}

function isRegular(fd: number): boolean {
  return fstatOf(fd).kind === "file";
}

/**
 * A key file's version record (when it has one) and entry bytes.
 *
 * @throws {CorruptError} when the record line is damaged or the entry is over the limit.
 */
export function splitFile(
  bytes: Uint8Array,
  key: string,
): { record?: VersionRecord; entry: Uint8Array } {
  let split;
  try {
    split = splitVersion(bytes);
  } catch (e) {
    throw new CorruptError(
      `[memory:file] Cannot parse memory ${quote(key)}: ${(e as Error).message}`,
      { key },
    );
  }
  if (split.entry.length > MAX_ENTRY_BYTES) {
    throw new CorruptError(
      `[memory:file] Cannot parse memory ${
        quote(key)
      }: the entry has more than ${MAX_ENTRY_BYTES} bytes, the limit of an entry`,
      { key },
    );
  }
  return split.record === undefined
    ? { entry: split.entry }
    : { record: split.record, entry: split.entry };
}

/**
 * A key file's entry bytes, its version record line (when it has one) skipped unread: what a
 * plain read needs, without parsing the record.
 *
 * @throws {CorruptError} when a record line is there but not ended, or the entry is over the limit.
 */
export function entryPart(bytes: Uint8Array, key: string): Uint8Array {
  let entry = bytes;
  if (hasRecord(bytes)) {
    const end = bytes.indexOf(0x0a);
    if (end < 0 || end > MAX_RECORD_BYTES) {
      throw new CorruptError(
        `[memory:file] Cannot parse memory ${quote(key)}: its version record line is cut short`,
        { key },
      );
    }
    entry = bytes.subarray(end + 1);
  }
  if (entry.length > MAX_ENTRY_BYTES) {
    throw new CorruptError(
      `[memory:file] Cannot parse memory ${
        quote(key)
      }: the entry has more than ${MAX_ENTRY_BYTES} bytes, the limit of an entry`,
      { key },
    );
  }
  return entry;
}

/**
 * The description in a key's header, reading as little of the file as the header needs.
 * `undefined` when the file vanished, may not be read or has no valid header: listing skips it,
 * as one bad file must not hide every other memory (read() of it reports the failure).
 */
export function readDescription(path: string, key: string): string | undefined {
  return readHead(path, { key, withRecord: false })?.description;
}

/**
 * The description and version record at the top of a key's file (the record is `undefined` for a
 * file written without history, or whose record is damaged), reading only that far.
 */
export function readHead(
  path: string,
  o: { key: string; withRecord?: boolean },
): { description: string | undefined; record: VersionRecord | undefined } | undefined {
  let fd: number;
  try {
    fd = openForRead(path);
  } catch (e) {
    const code = errorKind(e);
    if (NOT_A_MEMORY_FILE.has(code) || code === "EACCES" || code === "EPERM") return undefined;
    throw e;
  }
  try {
    return headOf(fd, o);
  } finally {
    close(fd);
  }
}

/** What a regular file is: its device and inode, and how many names it has. */
export interface FileFacts {
  readonly id: string;
  readonly nlink: number;
}

/** What `openFile` found under a name. */
export type Opened =
  | { readonly fd: number; readonly facts: FileFacts }
  | { readonly absent: true }
  | { readonly denied: true }
  | { readonly other: string };

/**
 * Opens the regular file `path` for reading, never through a symlink and never blocking, and
 * says what it is (fstat on the opened file, so what is read is what was judged).
 */
export function openFile(path: string): Opened {
  let fd: number;
  try {
    fd = openForRead(path);
  } catch (e) {
    const code = errorKind(e);
    if (code === "ENOENT") return { absent: true };
    if (code === "EACCES" || code === "EPERM") return { denied: true };
    if (code === "ELOOP") return { other: "a symbolic link" };
    if (NOT_A_MEMORY_FILE.has(code)) return { other: "not a regular file" };
    throw e;
  }
  const facts = factsOf(fd);
  if (typeof facts === "string") {
    close(fd);
    return { other: facts };
  }
  return { fd, facts };
}

/** The description and record at the top of the file open on `fd` (see `readHead`). */
export function headOf(
  fd: number,
  o: { key: string; withRecord?: boolean },
):
  | { description: string | undefined; record: VersionRecord | undefined; damaged?: true }
  | undefined {
  const { key, withRecord = true } = o;
  try {
    // Reads on until `want` bytes are in (or the file ends): the first probe is usually enough.
    let n = 0;
    let ended = false;
    const fill = (want: number) => {
      if (ended || n >= want) return;
      const got = readAllFrom(fd, { buf: HEADER_BUF.subarray(0, want), start: n });
      ended = got < want;
      n = got;
    };
    fill(HEADER_PROBE_BYTES);
    let start = 0;
    if (hasRecord(HEADER_BUF.subarray(0, n))) {
      // The record line is usually in the first read; a long one takes another.
      let nl = HEADER_BUF.subarray(0, n).indexOf(0x0a);
      if (nl < 0) {
        fill(MAX_RECORD_BYTES + 1);
        nl = HEADER_BUF.subarray(0, n).indexOf(0x0a);
      }
      if (nl < 0 || nl > MAX_RECORD_BYTES) return undefined;
      start = nl + 1;
    }
    let record: VersionRecord | undefined;
    let damaged: { damaged?: true } = {};
    if (start > 0 && withRecord) {
      try {
        record = splitVersion(HEADER_BUF.subarray(0, start)).record;
      } catch {
        record = undefined; // a damaged record: listed from its header, `check` names it
        damaged = { damaged: true };
      }
    }
    // A record alone: a delete's version file.
    if (start > 0 && ended && n === start) return { description: undefined, record, ...damaged };
    let end = indexOfClose(HEADER_BUF.subarray(0, n), start);
    if (end < 0) {
      fill(HEADER_BUF.length);
      end = indexOfClose(HEADER_BUF.subarray(0, n), start);
    }
    const header = HEADER_BUF.subarray(start, end < 0 ? n : end + CLOSE.length);
    const description = parseHeader(decodeUtf8(header, key), key).description;
    return { description, record, ...damaged };
  } catch (e) {
    if (e instanceof CorruptError) return undefined;
    // A name that is not a regular file after all (swapped in after the directory was read).
    if (errorKind(e) === "EISDIR" || errorKind(e) === "EAGAIN") return undefined;
    throw e;
  }
}

/**
 * The whole of the file open on `fd`, in the shared read buffer (use it before the next read);
 * `undefined` when it holds more than a key's file may.
 */
export function bytesOf(fd: number): Uint8Array | undefined {
  const n = readAll(fd, ENTRY_BUF);
  return n > MAX_FILE_BYTES ? undefined : ENTRY_BUF.subarray(0, n);
}

// Where the header's close starts in `bytes`, looking from `start`; -1 when it is not there.
function indexOfClose(bytes: Uint8Array, start = 0): number {
  const length = bytes.length;
  // The header opens with "---\n", so its close can start at byte 3 at the earliest.
  for (let i = bytes.indexOf(0x0a, start + 3); i >= 0 && i + CLOSE.length <= length;) {
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
