// Helpers the backends' audits share: a name's legal key, one stored value's verdict, and the
// order an audit reports in. No backend logic here.

import { CorruptError, InvalidKeyError } from "./errors.ts";
import { parseEntry } from "./serialize.ts";
import { validateKey } from "./validate.ts";
import type { AuditEntry, StoreAudit } from "./types.ts";

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
