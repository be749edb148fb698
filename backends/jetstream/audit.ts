// The operator's view of a jetstream store's keyspace, from one listing scan: the latest value of
// every key under the prefix, including what `list()` hides (a value that is not an entry, a
// damaged one, a name that is not a legal memory key). A deleted key's marker holds nothing.

import type { AuditEntry, StoreAudit } from "../../store/types.ts";
import { auditValue, keyOf, sortedAudit } from "../../store/verdict.ts";
import type { ScanResult } from "./scan.ts";

/** What a scan that kept illegal names saw, as an audit: every live name, healthy or not. */
export function auditOfScan(scanned: ScanResult): StoreAudit {
  const entries: AuditEntry[] = [];
  for (const [key, { value }] of scanned.latest) entries.push(auditValue(key, value));
  for (const name of scanned.illegal.keys()) {
    const legal = keyOf(name);
    // A name validateKey refuses in a subject is illegal here too; keyOf only says why.
    entries.push({
      name,
      problem: "illegal_name",
      reason: "reason" in legal ? legal.reason : "the name is not a legal key",
    });
  }
  return sortedAudit(entries, []);
}
