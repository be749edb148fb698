// What an operator's audit of a store finds: every name in the store's keyspace, including the
// ones `list()` hides (a damaged header, a damaged body, a name that is not a legal key, something
// that is not an entry at all). Shared by the per-backend scanners; no backend logic here.

import { CorruptError, InvalidKeyError } from "../store/errors.ts";
import { parseEntry } from "../store/serialize.ts";
import type { Entry } from "../store/types.ts";
import { validateKey } from "../store/validate.ts";

/** Why an audited name is not a healthy memory. */
export type AuditProblem = "corrupt" | "illegal_name" | "not_a_file" | "unreadable";

/** One name found in a store's keyspace. */
export interface AuditEntry {
  /** The name as found: the key for a legal one, else the raw name (file name or bucket key). */
  readonly name: string;
  /** The memory key, when the name is a legal one. */
  readonly key?: string | undefined;
  /** The parsed entry, when it is healthy. */
  readonly entry?: Entry | undefined;
  /** What is wrong, when it is not healthy. */
  readonly problem?: AuditProblem | undefined;
  /** The reason, in words, when it is not healthy. */
  readonly reason?: string | undefined;
}

/** Everything an audit saw, sorted by name. */
export interface StoreAudit {
  /** Every name in the keyspace, healthy or not. */
  readonly entries: readonly AuditEntry[];
  /** Names beside the keyspace that are never memories (temp files, other files), for the record. */
  readonly ignored: readonly string[];
}

/** The legal key a name stands for, or the reason it is not one. */
export function keyOf(name: string): { key: string } | { reason: string } {
  try {
    return { key: validateKey(name) };
  } catch (e) {
    if (!(e instanceof InvalidKeyError)) throw e;
    return { reason: `the name is not a legal key: ${afterSubject(e.message)}` };
  }
}

/** Audits one stored value under a legal key: healthy, or corrupt with the parser's reason. */
export function auditValue(key: string, stored: Uint8Array): AuditEntry {
  try {
    return { name: key, key, entry: parseEntry(stored, key) };
  } catch (e) {
    if (!(e instanceof CorruptError)) throw e;
    return { name: key, key, problem: "corrupt", reason: afterSubject(e.message) };
  }
}

/** Sorts entries and ignored names by name (code unit order, as `list()` sorts keys). */
export function sortedAudit(entries: AuditEntry[], ignored: string[]): StoreAudit {
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return {
    entries: entries.sort((a, b) => byName(a.name, b.name)),
    ignored: ignored.sort(byName),
  };
}

/**
 * The problem in a library message that reads `Cannot parse memory "k": <problem>`; the audit
 * names the key itself. The quoted subject never holds `": `, as quote() escapes every quote.
 */
export function afterSubject(message: string): string {
  const at = message.indexOf('": ');
  return at < 0 ? message : message.slice(at + 3);
}
