// Retention records: where retention cut a key's oldest versions, so that check tells a cut by
// retention from a truncation. A key that keeps versions has `.history/<key>/cut`, replaced whole
// at each cut; a key that expired whole keeps one line in `.history/.expired`, appended once.
//
//   agentmem-cut {"seq":40,"hash":"<the hash of version 40>","from":33}
//   agentmem-expired {"key":"notes","seq":7,"hash":"<the hash of version 7>"}
//
// Every version at or below `seq` was removed by retention, or is being removed: `from` is the
// lowest one the cut may have left on disk (removed at the next cut).

import * as fs from "node:fs";
import { isChainHash } from "../../store/chain.ts";
import { errorKind } from "../../store/text.ts";
import type { ChainLink } from "../../store/backend.ts";
import type { Dir } from "./dirs.ts";
import { close, createWith, fstatOf, syncData } from "./fs.ts";
import { CUT_NAME, EXPIRED_NAME, legalKey, tempName } from "./names.ts";
import { selfToken } from "./process.ts";

const F = fs.constants;
const CUT_PREFIX = "agentmem-cut ";
const EXPIRED_PREFIX = "agentmem-expired ";
const MODE = 0o600;
const MAX_CUT_BYTES = 512;
const ENCODER = new TextEncoder();
const DECODER = new TextDecoder("utf-8", { fatal: true });

/** A key's retention record. */
export interface CutRecord {
  /** Every version at or below this one was cut. */
  readonly seq: number;
  /** The hash of version `seq`, which the oldest kept version chains to. */
  readonly hash: string;
  /** The lowest version the cut may have left on disk (removed at the next cut). */
  readonly from: number;
}

/** The key's retention record: none, or "damaged" when it cannot be read. */
export function readCut(kd: Dir): CutRecord | undefined | "damaged" {
  let text: string;
  try {
    if (!fs.existsSync(kd.at(CUT_NAME))) return undefined;
    const fd = fs.openSync(kd.at(CUT_NAME), F.O_RDONLY | F.O_NOFOLLOW | F.O_NONBLOCK);
    try {
      if (fstatOf(fd).kind !== "file") return "damaged";
      const buf = new Uint8Array(MAX_CUT_BYTES);
      const n = fs.readSync(fd, buf, 0, buf.length, 0);
      text = DECODER.decode(buf.subarray(0, n));
    } finally {
      fs.closeSync(fd);
    }
  } catch (e) {
    if (errorKind(e) === "ENOENT") return undefined;
    return "damaged";
  }
  if (!text.startsWith(CUT_PREFIX) || !text.endsWith("\n")) return "damaged";
  const r = parseJson(text.slice(CUT_PREFIX.length, -1));
  if (
    r === undefined || !isSeq(r.seq) || !isChainHash(r.hash) || !isSeq(r.from) ||
    (r.from as number) > (r.seq as number) + 1
  ) return "damaged";
  return { seq: r.seq as number, hash: r.hash as string, from: r.from as number };
}

/**
 * Replaces the key's retention record with `record`: staged in the key's directory, flushed, then
 * renamed into place, so it is whole or absent. The caller holds the key's lock.
 */
export async function writeCut(kd: Dir, record: CutRecord): Promise<void> {
  const line = `${CUT_PREFIX}${
    JSON.stringify({ seq: record.seq, hash: record.hash, from: record.from })
  }\n`;
  const temp = kd.at(tempName("cut", selfToken()));
  const fd = createWith(temp, { bytes: ENCODER.encode(line), mode: MODE });
  try {
    await syncData(fd);
  } catch (e) {
    fs.rmSync(temp, { force: true });
    throw e;
  } finally {
    close(fd);
  }
  try {
    fs.renameSync(temp, kd.at(CUT_NAME));
  } catch (e) {
    fs.rmSync(temp, { force: true });
    throw e;
  }
}

/** The retention records of the keys that expired whole, as `.history/.expired` holds them. */
export interface ExpiredRecords {
  /** By key, the newest record (the highest `seq`). */
  readonly byKey: ReadonlyMap<string, ChainLink & { readonly seq: number }>;
  /** Lines that could not be read. */
  readonly damaged: number;
}

const NO_RECORDS: ExpiredRecords = { byKey: new Map(), damaged: 0 };

/**
 * The expired keys' records of the history directory `hd`, read once per change of the file: the
 * cache holds what was read, and only the lines appended since are read again.
 */
export class ExpiredIndex {
  #seen: { id: string; size: number } | undefined;
  #byKey = new Map<string, ChainLink & { readonly seq: number }>();
  #damaged = 0;
  #tail = "";

  /** What the file holds now. */
  read(hd: Dir): ExpiredRecords {
    if (!fs.existsSync(hd.at(EXPIRED_NAME))) {
      this.#reset();
      return NO_RECORDS;
    }
    let fd: number;
    try {
      fd = fs.openSync(hd.at(EXPIRED_NAME), F.O_RDONLY | F.O_NOFOLLOW | F.O_NONBLOCK);
    } catch (e) {
      if (errorKind(e) !== "ENOENT") throw e;
      this.#reset();
      return NO_RECORDS;
    }
    try {
      const st = fstatOf(fd);
      if (st.kind !== "file") return { byKey: this.#byKey, damaged: this.#damaged + 1 };
      const id = `${st.dev}:${st.ino}`;
      if (this.#seen === undefined || this.#seen.id !== id || st.size < this.#seen.size) {
        this.#reset();
      }
      const from = this.#seen?.size ?? 0;
      if (st.size > from) {
        const buf = new Uint8Array(st.size - from);
        let n = 0;
        while (n < buf.length) {
          const got = fs.readSync(fd, buf, n, buf.length - n, from + n);
          if (got === 0) break;
          n += got;
        }
        this.#take(new TextDecoder().decode(buf.subarray(0, n)));
        this.#seen = { id, size: from + n };
      }
      return { byKey: this.#byKey, damaged: this.#damaged };
    } finally {
      fs.closeSync(fd);
    }
  }

  #reset(): void {
    this.#seen = undefined;
    this.#byKey = new Map();
    this.#damaged = 0;
    this.#tail = "";
  }

  #take(text: string): void {
    const lines = (this.#tail + text).split("\n");
    // A line not yet ended is read again with what comes after it.
    this.#tail = lines.pop() ?? "";
    for (const line of lines) {
      const r = line.startsWith(EXPIRED_PREFIX)
        ? parseJson(line.slice(EXPIRED_PREFIX.length))
        : undefined;
      const key = typeof r?.key === "string" ? legalKey(r.key) : undefined;
      if (r === undefined || key === undefined || !isSeq(r.seq) || !isChainHash(r.hash)) {
        this.#damaged++;
        continue;
      }
      const seq = r.seq as number;
      if ((this.#byKey.get(key)?.seq ?? 0) < seq) {
        this.#byKey.set(key, { seq, revision: String(seq), hash: r.hash as string });
      }
    }
  }
}

/**
 * Appends an expired key's record to `.history/.expired` and flushes it (and, when it made the
 * file, the history directory), before any of the key's versions goes. The caller holds the key's
 * lock.
 */
export async function appendExpired(
  hd: Dir,
  record: { readonly key: string; readonly seq: number; readonly hash: string },
): Promise<boolean> {
  const line = `${EXPIRED_PREFIX}${
    JSON.stringify({ key: record.key, seq: record.seq, hash: record.hash })
  }\n`;
  const path = hd.at(EXPIRED_NAME);
  let made = false;
  let fd: number | undefined;
  while (fd === undefined) {
    try {
      fd = fs.openSync(path, F.O_WRONLY | F.O_APPEND | F.O_NOFOLLOW);
    } catch (e) {
      if (errorKind(e) !== "ENOENT") throw e;
      try {
        fd = fs.openSync(path, F.O_WRONLY | F.O_APPEND | F.O_CREAT | F.O_EXCL | F.O_NOFOLLOW, MODE);
        made = true;
      } catch (e2) {
        if (errorKind(e2) !== "EEXIST") throw e2;
      }
    }
  }
  try {
    if (fstatOf(fd).kind !== "file") throw new Error(`${EXPIRED_NAME} is not a regular file`);
    fs.writeSync(fd, ENCODER.encode(line));
    await syncData(fd);
  } finally {
    close(fd);
  }
  return made;
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function isSeq(v: unknown): boolean {
  return Number.isSafeInteger(v) && (v as number) >= 1;
}
