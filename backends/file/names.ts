// How keys and their versions map to names in a memory directory:
//
//   <key>.md                    a memory (its head)
//   .<key>.<token>.<hex>.tmp    a write's staged file (`~` ends a key cut short to fit the name)
//   .<key>.lock                 a key's lock (lock.ts)
//   .<key>.del                  a delete's version, beside the head it removed, until it is in
//                               .history (write.ts)
//   .creates                    one byte per create since the file was made (creates.ts)
//   .~lock.<token>.<hex>.tmp    a process's file its locks are linked to (lock_file.ts)
//   .history/<key>/<seq>.md     version <seq> of a key
//   .history/<key>/cut          the key's retention record (retention.ts)
//   .history/.expired           the retention records of keys that expired whole, one a line

import { validateKey } from "../../store/validate.ts";
import { randomHex } from "../../store/random.ts";

/** What a key's file name ends with. */
export const SUFFIX = ".md";
/** What a temp file's name ends with (it also starts with a dot, so it is never a key). */
export const TEMP_SUFFIX = ".tmp";
/** The store's create marks (creates.ts). */
export const CREATES_NAME = ".creates";
/** The stem of a process's shared lock file's name: `.~lock.<token>.<nonce>.tmp`. */
export const SHARED_LOCK_STEM = ".~lock";
const SHARED_LOCK_NAME = /^\.~lock\.[^.]+\.[0-9a-f]{12}\.tmp$/;

/** Whether `name` (in a memory directory) is a process's shared lock file. */
export function isSharedLockName(name: string): boolean {
  return SHARED_LOCK_NAME.test(name);
}

/**
 * Whether `name` in a memory directory is one the backend keeps for itself beside the memories:
 * the history, the create marks, a process's shared lock file.
 */
export function isBookkeepingName(name: string): boolean {
  return name === HISTORY_DIR || name === CREATES_NAME || isSharedLockName(name);
}

/** The directory under the store's that holds every key's versions. */
export const HISTORY_DIR = ".history";
/** A key's retention record, in its history directory. */
export const CUT_NAME = "cut";
/** The retention records of keys that expired whole, in the history directory. */
export const EXPIRED_NAME = ".expired";
/** When retention last looked at every deleted key (its modification time), likewise. */
export const SWEPT_NAME = ".swept";
const DEL_SUFFIX = ".del";
const NAME_MAX = 255;
const SEQ_NAME = /^[1-9][0-9]{0,15}\.md$/;

/** The key a file name stands for, or `undefined` for a name that is not a legal key's file. */
export function keyOf(name: string): string | undefined {
  if (!name.endsWith(SUFFIX) || name.charCodeAt(0) === 0x2e) return undefined;
  return legalKey(name.slice(0, -SUFFIX.length));
}

/** `name` when it is a legal key, else `undefined`. */
export function legalKey(name: string): string | undefined {
  try {
    return validateKey(name);
  } catch {
    return undefined;
  }
}

/** The file name of version `seq`. */
export function versionName(seq: number): string {
  return `${seq}${SUFFIX}`;
}

/** The sequence a version file's name stands for, or `undefined` for another name. */
export function seqOfName(name: string): number | undefined {
  return SEQ_NAME.test(name) ? Number(name.slice(0, -SUFFIX.length)) : undefined;
}

/** The name of a delete's version kept beside the head (see the top of this file). */
export function pendingDeleteName(key: string): string {
  return `.${key}${DEL_SUFFIX}`;
}

/** The key a pending delete's name stands for, or `undefined`. */
export function keyOfPendingDelete(name: string): string | undefined {
  if (name.charCodeAt(0) !== 0x2e || !name.endsWith(DEL_SUFFIX)) return undefined;
  return legalKey(name.slice(1, -DEL_SUFFIX.length));
}

/** A new temp file's name for `key`, written by the process with `token`. */
export function tempName(key: string, token: string): string {
  const tail = `.${token}.${randomHex(8)}${TEMP_SUFFIX}`;
  const room = NAME_MAX - 1 - tail.length;
  return `.${key.length <= room ? key : `${key.slice(0, room - 1)}~`}${tail}`;
}

/**
 * What a temp file's name says of the key it was staged for: the key, or (for a long key cut
 * short) the start of it; `undefined` for a name that is not a temp file's.
 */
export function keyOfTemp(name: string): { key: string } | { prefix: string } | undefined {
  if (name.charCodeAt(0) !== 0x2e || !name.endsWith(TEMP_SUFFIX)) return undefined;
  const parts = name.slice(1, -TEMP_SUFFIX.length).split(".");
  if (parts.length < 3) return undefined;
  const stem = parts.slice(0, -2).join(".");
  if (stem.endsWith("~")) return { prefix: stem.slice(0, -1) };
  const key = legalKey(stem);
  return key === undefined ? undefined : { key };
}
