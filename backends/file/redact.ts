// Redaction in a file store: a version's file in `.history/<key>/` is replaced, under the key's
// lock, by its record line alone, which keeps the entry's digest and who, when and why (see
// envelope.ts), so the chain still verifies. The old file's bytes are cleared first through a
// descriptor held on it, so no other name it has keeps them. A version in chain format 1 (its
// hash covers the bytes) cannot stay verifiable: a purge removes those, the chain's oldest, under
// a retention record instead (cut.ts), as retention would.

import * as fs from "node:fs";
import { ConfigError, CorruptError, NotFoundError } from "../../store/errors.ts";
import { digestOf } from "../../store/chain.ts";
import type { Call } from "../../store/backend.ts";
import type { Redaction } from "../../store/types.ts";
import { quote } from "../../store/text.ts";
import { type Found, readKey } from "./chain.ts";
import { readCut, writeCut } from "./cut.ts";
import type { ExpiredIndex } from "./cut.ts";
import { type Dir, openDir, syncOpenDir } from "./dirs.ts";
import { recordLine, splitVersion, type VersionRecord } from "./envelope.ts";
import { close, createWith, syncData } from "./fs.ts";
import { acquire, lockPath, release } from "./lock.ts";
import { HISTORY_DIR, tempName, versionName } from "./names.ts";
import { selfToken } from "./process.ts";
import { bytesOf, openFile } from "./read.ts";

const F = fs.constants;
const MODE = 0o600;

/** Where the redaction works: the store's directory and its expired keys' records. */
export interface RedactRoot {
  readonly root: string;
  readonly durable: boolean;
  readonly expired: ExpiredIndex;
}

/** What to redact (see `HistoryOps.redact`). */
export interface RedactRequest {
  readonly revisions: readonly string[];
  readonly redaction: Redaction;
  readonly orCut?: boolean | undefined;
}

/** Redacts `o.revisions` of `key`. */
export async function redactFile(
  r: RedactRoot,
  key: string,
  o: RedactRequest,
  call: Call,
): Promise<void> {
  const lock = await acquire(lockPath(r.root, key), { key, signal: call.signal });
  try {
    const hd = openDir(r.root, HISTORY_DIR);
    const kd = hd === undefined ? undefined : openDir(hd, key);
    try {
      if (hd === undefined || kd === undefined) throw notKept(key, o.revisions[0] ?? "");
      const expired = r.expired.read(hd).byKey.get(key);
      const kh = readKey(key, { root: r.root, hd, expired, verify: true });
      const bySeq = new Map(kh.chain.map((f) => [f.seq, f]));
      const cut: Found[] = [];
      for (const revision of o.revisions) {
        const f = bySeq.get(Number(revision));
        if (f === undefined || f.place !== "history") throw notKept(key, revision);
        if (f.record!.redacted !== undefined || f.record!.op === "delete") continue;
        if (f.record!.seq === kh.tip?.seq) {
          throw new ConfigError(
            `[memory:file] Cannot redact version ${revision} of memory ${
              quote(key)
            }: it is what the memory holds now`,
          );
        }
        if (f.intact !== true) {
          throw new CorruptError(
            `[memory:file] Cannot redact version ${revision} of memory ${
              quote(key)
            }: its bytes do not match its hash (run agentmem check)`,
            { key },
          );
        }
        if (f.record!.format === 1) {
          if (o.orCut !== true) throw format1(key, revision);
          cut.push(f);
          continue;
        }
        await redactOne(kd, { key, seq: f.seq, redaction: o.redaction });
      }
      if (cut.length > 0) await cutOldest(kd, { key, chain: kh.chain, upTo: cut });
      if (r.durable) await syncOpenDir(kd);
    } finally {
      kd?.close();
      hd?.close();
    }
  } finally {
    release(lock);
  }
}

// Replaces version `seq`'s file with its record line alone (the digest and redaction in it),
// after clearing the old file's bytes under every name it has.
async function redactOne(
  kd: Dir,
  v: { readonly key: string; readonly seq: number; readonly redaction: Redaction },
): Promise<void> {
  const path = kd.at(versionName(v.seq));
  const opened = openFile(path);
  if (!("fd" in opened)) throw notKept(v.key, String(v.seq));
  let record: VersionRecord;
  let digest;
  try {
    const bytes = bytesOf(opened.fd);
    const split = bytes === undefined ? undefined : splitVersion(bytes);
    if (split?.record === undefined) throw notKept(v.key, String(v.seq));
    record = split.record;
    digest = digestOf(split.entry);
  } finally {
    close(opened.fd);
  }
  const line = recordLine({ ...record, redacted: { ...digest, ...v.redaction } });
  const temp = kd.at(tempName(v.key, selfToken()));
  const fd = createWith(temp, { bytes: line, mode: MODE });
  try {
    await syncData(fd);
  } catch (e) {
    fs.rmSync(temp, { force: true });
    throw e;
  } finally {
    close(fd);
  }
  // A descriptor on the old file, taken before it is replaced, clears it under every name.
  const old = fs.openSync(path, F.O_WRONLY | F.O_NOFOLLOW | F.O_NONBLOCK);
  try {
    fs.renameSync(temp, path);
    fs.ftruncateSync(old, 0);
    fs.fsyncSync(old);
  } catch (e) {
    fs.rmSync(temp, { force: true });
    throw e;
  } finally {
    fs.closeSync(old);
  }
}

// Removes versions in chain format 1 (the chain's oldest, up to the newest in `upTo`) under a
// retention record, as retention cuts, their bytes cleared under every name first.
async function cutOldest(
  kd: Dir,
  c: { readonly key: string; readonly chain: readonly Found[]; readonly upTo: readonly Found[] },
): Promise<void> {
  const top = Math.max(...c.upTo.map((f) => f.seq));
  const newest = c.chain.find((f) => f.seq === top)!;
  const prior = readCut(kd);
  const from = prior === undefined || prior === "damaged" ? 1 : prior.from;
  await writeCut(kd, { seq: top, hash: newest.record!.hash, from });
  for (const f of c.chain) {
    if (f.seq > top) continue;
    const path = kd.at(versionName(f.seq));
    try {
      const fd = fs.openSync(path, F.O_WRONLY | F.O_NOFOLLOW | F.O_NONBLOCK);
      try {
        fs.ftruncateSync(fd, 0);
      } finally {
        fs.closeSync(fd);
      }
      fs.unlinkSync(path);
    } catch {
      // Gone already; the retention record covers it either way.
    }
  }
}

function notKept(key: string, revision: string): NotFoundError {
  return new NotFoundError(
    `[memory:file] Cannot redact version ${revision} of memory ${
      quote(key)
    }: it is not kept (pruned meanwhile)`,
    { key },
  );
}

function format1(key: string, revision: string): ConfigError {
  return new ConfigError(
    `[memory:file] Cannot redact version ${revision} of memory ${
      quote(key)
    }: it is in chain format 1, whose hash covers its bytes, so it could not be verified without them; purgeKey removes such versions under a retention record`,
  );
}
