// The file backend's sidecar (store/sidecar.ts): one file per space in the memory directory,
// `.sidecar-<space>.bin`, a hidden name that no listing, count, audit or history looks at. A
// space is read whole and replaced whole (a temp file renamed over it); an update re-reads the
// file first, so writers in other processes rarely undo each other (a cache). The files sit in
// the directory itself, opened with O_NOFOLLOW; a rename replaces a planted symlink. `forget` (a
// redaction's or purge's) rewrites every space without the key, clears the replaced file through
// a descriptor taken before the rename (no other name keeps the record) and removes every temp
// file of the sidecar (a live writer's rename then fails; its search keeps its vectors in memory).
//
// A record: 0xA7, the key's length (1 byte), the padding's length (1 byte), 0, the payload's
// length (4 bytes, little-endian), the key, the padding (zeros), the payload, which so starts at
// a multiple of 8 bytes into the file. Reading stops at the first record that does not parse (a
// damaged file reads as what came before it; the next update rewrites it).

import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import process from "node:process";
import type { Call } from "../../store/backend.ts";
import { SIDECAR_SPACE, type SidecarChange, type SidecarOps } from "../../store/sidecar.ts";
import { errorKind } from "../../store/text.ts";
import { close, createWith, openForRead, readAll, removeQuietly } from "./fs.ts";

/** What the name of every sidecar file in a memory directory starts with. */
export const SIDECAR_PREFIX = ".sidecar-";
const F = fs.constants;
const MAGIC = 0xa7;
const HEAD = 8;
const MODE = 0o600;
// A temp file left by a writer that died is removed by the next update once it is this old.
const STALE_TEMP_MS = 60 * 60 * 1000;
const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

/** The sidecar of the memory directory `root` (a canonical path). */
export class FileSidecar implements SidecarOps {
  readonly #root: string;

  constructor(root: string) {
    this.#root = root;
  }

  // deno-lint-ignore require-await
  async read(space: string, _call: Call): Promise<Map<string, Uint8Array>> {
    return parse(readFile(this.#path(space)));
  }

  // deno-lint-ignore require-await
  async update(space: string, change: SidecarChange, _call: Call): Promise<void> {
    const path = this.#path(space);
    const records = parse(readFile(path));
    for (const key of change.remove) records.delete(key);
    for (const [key, value] of change.put) records.set(key, value);
    replace(path, records);
    this.#sweep(space);
  }

  // deno-lint-ignore require-await
  async forget(key: string, _call: Call): Promise<void> {
    for (const name of fs.readdirSync(this.#root)) {
      if (!name.startsWith(SIDECAR_PREFIX)) continue;
      const path = `${this.#root}/${name}`;
      if (name.endsWith(".tmp")) removeQuietly(path);
      // Another forget at once may remove this one's temp file: it then tries again.
      else if (name.endsWith(".bin")) retry(() => this.#drop(path, key));
    }
  }

  // Rewrites the space at `path` without `key`'s record, and clears the file it replaces.
  #drop(path: string, key: string): void {
    let old: number;
    try {
      old = fs.openSync(path, F.O_RDWR | F.O_NOFOLLOW | F.O_NONBLOCK);
    } catch (e) {
      const kind = errorKind(e);
      if (kind === "ENOENT" || kind === "ELOOP") return;
      throw e;
    }
    try {
      if (!fs.fstatSync(old).isFile()) return;
      // The very file the descriptor holds, which is the one cleared below.
      const records = parse(new Uint8Array(fs.readFileSync(old)));
      if (!records.delete(key)) return;
      replace(path, records);
      fs.ftruncateSync(old, 0);
    } finally {
      close(old);
    }
  }

  #path(space: string): string {
    if (!SIDECAR_SPACE.test(space)) throw new RangeError(`Illegal sidecar space ${space}`);
    return `${this.#root}/${SIDECAR_PREFIX}${space}.bin`;
  }

  // Removes this space's temp files whose writers died; best effort.
  #sweep(space: string): void {
    try {
      const now = Date.now();
      const start = `${SIDECAR_PREFIX}${space}.`;
      for (const name of fs.readdirSync(this.#root)) {
        if (!name.startsWith(start) || !name.endsWith(".tmp")) continue;
        const path = `${this.#root}/${name}`;
        const st = fs.lstatSync(path, { throwIfNoEntry: false });
        if (st?.isFile() && now - st.mtimeMs > STALE_TEMP_MS) removeQuietly(path);
      }
    } catch {
      // The next update tries again.
    }
  }
}

// Replaces the space at `path` by `records`: a temp file (`<path>.<pid>.<random>.tmp`, a name
// the sweep and `forget` know) renamed over it.
function replace(path: string, records: ReadonlyMap<string, Uint8Array>): void {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  close(createWith(temp, { bytes: encode(records), mode: MODE }));
  try {
    fs.renameSync(temp, path);
  } catch (e) {
    removeQuietly(temp);
    throw e;
  }
}

// Runs `fn` again (twice at most) while it fails with ENOENT.
function retry(fn: () => void): void {
  for (let attempt = 1;; attempt++) {
    try {
      return fn();
    } catch (e) {
      if (attempt === 3 || errorKind(e) !== "ENOENT") throw e;
    }
  }
}

// The bytes of a space's file; none when it does not exist.
function readFile(path: string): Uint8Array {
  let fd: number;
  try {
    fd = openForRead(path);
  } catch (e) {
    // Nothing there, or a symlink planted in its place (never followed; an update replaces it).
    const kind = errorKind(e);
    if (kind === "ENOENT" || kind === "ELOOP") return new Uint8Array(0);
    throw e;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return new Uint8Array(0);
    const buf = new Uint8Array(st.size);
    return buf.subarray(0, readAll(fd, buf));
  } finally {
    close(fd);
  }
}

function parse(bytes: Uint8Array): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 0; at + HEAD <= bytes.length;) {
    const keyLength = bytes[at + 1]!;
    const start = at + HEAD + keyLength + bytes[at + 2]!;
    const end = start + view.getUint32(at + 4, true);
    if (bytes[at] !== MAGIC || keyLength === 0 || start % 8 !== 0 || end > bytes.length) break;
    const key = DECODER.decode(bytes.subarray(at + HEAD, at + HEAD + keyLength));
    // A view of the file's own buffer, which nothing else holds.
    out.set(key, bytes.subarray(start, end));
    at = end;
  }
  return out;
}

function encode(records: ReadonlyMap<string, Uint8Array>): Uint8Array {
  const keys = [...records.keys()].map((k) => ENCODER.encode(k));
  const values = [...records.values()];
  const pads: number[] = [];
  let size = 0;
  keys.forEach((key, i) => {
    const pad = (8 - ((size + HEAD + key.length) % 8)) % 8;
    pads.push(pad);
    size += HEAD + key.length + pad + values[i]!.length;
  });
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  keys.forEach((key, i) => {
    const [pad, value] = [pads[i]!, values[i]!];
    out[at] = MAGIC;
    out[at + 1] = key.length;
    out[at + 2] = pad;
    view.setUint32(at + 4, value.length, true);
    out.set(key, at + HEAD);
    out.set(value, at + HEAD + key.length + pad);
    at += HEAD + key.length + pad + value.length;
  });
  return out;
}
