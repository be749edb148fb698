// The operator's view of a file store's directory: every name in it, including what the file
// backend's `list()` hides, read the way the backend reads entries, without writing anything.
//
// The layout is the backend's published one: `<dir>/<key>.md`, temp files start with a dot, and a
// key's lock is `.<key>.lock` (lock.ts): a lock that is not held by a live writer is reported,
// judged as a writer would judge it, so an operator learns which file blocks a key.

import { lstatSync, readdirSync } from "node:fs";
import { CorruptError } from "../../store/errors.ts";
import { errorKind } from "../../store/text.ts";
import { isBookkeepingName, SUFFIX } from "./names.ts";
import { SIDECAR_PREFIX } from "./sidecar.ts";
import { readCurrent, splitFile } from "./read.ts";
import { inspect, isLockName } from "./lock.ts";
import type { AuditEntry, AuditLock, StoreAudit } from "../../store/types.ts";
import { afterSubject, auditValue, keyOf, sortedAudit } from "../../store/verdict.ts";

const NO_THROW = { throwIfNoEntry: false } as const;

/**
 * Audits every name in a file store's directory. Nothing is created, written or removed.
 *
 * @param dir The memory directory; it must exist.
 * @returns Every `*.md` name (healthy, corrupt, illegal, not a regular file or unreadable) and the
 * other names, sorted.
 */
export function auditFileDir(dir: string): StoreAudit {
  const entries: AuditEntry[] = [];
  const ignored: string[] = [];
  const locks: AuditLock[] = [];
  for (const name of readdirSync(dir)) {
    // The store's own history (its problems are reported apart, by key) and bookkeeping.
    if (isBookkeepingName(name) || name.startsWith(SIDECAR_PREFIX)) continue;
    if (isLockName(name)) {
      const found = auditLock(dir, name);
      if (found === undefined) ignored.push(name);
      else locks.push(found);
      continue;
    }
    if (!name.endsWith(SUFFIX)) {
      ignored.push(name);
      continue;
    }
    const stem = name.slice(0, -SUFFIX.length);
    const legal = keyOf(stem);
    if ("reason" in legal) {
      entries.push({ name, problem: "illegal_name", reason: legal.reason });
      continue;
    }
    const read = readEntryFile(`${dir}/${name}`, legal.key);
    if (read.bytes !== undefined) entries.push(auditValue(legal.key, read.bytes));
    else if (read.problem !== undefined) {
      entries.push({ name: legal.key, key: legal.key, ...read.problem });
    }
  }
  return { ...sortedAudit(entries, ignored), locks: locks.sort((a, b) => byName(a.name, b.name)) };
}

// A lock name as a writer would judge it; `undefined` when it is held by a live writer or gone.
function auditLock(dir: string, name: string): AuditLock | undefined {
  const stem = /^\.(.+?)\.lock(\.b[0-9a-f]{12})*$/.exec(name)?.[1] ?? "";
  const legal = keyOf(stem);
  const key = "key" in legal ? legal.key : undefined;
  const seen = inspect(`${dir}/${name}`);
  switch (seen.state) {
    case "gone":
    case "held":
      return undefined;
    case "foreign":
      return {
        name,
        key,
        state: "foreign",
        reason: `not a lock this library wrote (${seen.what}); every write of the key fails ` +
          `until an operator removes it`,
      };
    case "dead":
      return {
        name,
        key,
        state: "dead",
        reason: `${
          seen.content.replaceAll("\0", "") === ""
            ? "left without content by a power cut"
            : "left by a writer that died"
        }; the next write of the key removes it`,
      };
    case "unknown":
      return {
        name,
        key,
        state: "unjudged",
        reason: `held by a process this one cannot judge (${seen.why}); writes wait for it and ` +
          `never break it; if no writer is running, an operator may remove it`,
      };
  }
}

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// A key's file, read as the backend reads it: its bytes, or why it is not a readable regular
// file; neither when it vanished. The bytes are the backend's shared read buffer: use them at once.
function readEntryFile(
  path: string,
  key: string,
): { bytes?: Uint8Array; problem?: Pick<AuditEntry, "problem" | "reason"> } {
  const st = lstatSync(path, NO_THROW);
  if (st === undefined) return {};
  if (!st.isFile()) {
    const what = st.isDirectory()
      ? "a directory"
      : st.isSymbolicLink()
      ? "a symbolic link"
      : "not a regular file";
    return {
      problem: {
        problem: "not_a_file",
        reason: `it is ${what}, not a memory file; the backend never follows or lists it`,
      },
    };
  }
  try {
    const bytes = readCurrent(path, { key });
    return bytes === undefined ? {} : { bytes: splitFile(bytes, key).entry };
  } catch (e) {
    if (e instanceof CorruptError) {
      return { problem: { problem: "corrupt", reason: afterSubject(e.message) } };
    }
    const code = errorKind(e);
    if (code === "EACCES" || code === "EPERM") {
      return { problem: { problem: "unreadable", reason: "permission denied" } };
    }
    return { problem: { problem: "unreadable", reason: `it cannot be read (${code})` } };
  }
}
