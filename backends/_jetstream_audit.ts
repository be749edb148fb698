// The operator's view of a jetstream store's keyspace: the latest value of every key under the
// prefix, including what the backend's `list()` hides (a value that is not an entry, a damaged
// one, a key that is not a legal memory key). One pass over the bucket's stream, as listing does.
//
// The layout is the backend's published one: bucket keys are `<prefix>.<key>`, or `<key>` with an
// empty prefix, on subjects `$KV.<bucket>.<bucket key>`; a deleted or purged key's latest message
// is a marker, which holds nothing.

import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { type AuditEntry, auditValue, keyOf, sortedAudit, type StoreAudit } from "./_audit.ts";

/** Where a jetstream store lives. */
export interface JetStreamAuditOptions {
  /** The KV bucket. */
  readonly bucket: string;
  /** The key prefix; `""` for the whole bucket. */
  readonly prefix: string;
  /** Milliseconds each request may take (default 5000). */
  readonly timeout?: number | undefined;
}

const BATCH = 128;

/**
 * Audits every live key under a jetstream store's prefix. Writes nothing to the bucket (the scan
 * uses a short-lived consumer, deleted afterwards, as the backend's listing does).
 *
 * @param nc A NATS connection (borrowed, never closed).
 * @param options The bucket and the prefix.
 * @returns Every live key, healthy or not, sorted by name.
 */
export async function auditJetStream(
  nc: NatsConnection,
  options: JetStreamAuditOptions,
): Promise<StoreAudit> {
  const timeout = options.timeout ?? 5_000;
  const stream = `KV_${options.bucket}`;
  const keyPrefix = options.prefix === "" ? "" : `${options.prefix}.`;
  const subjectPrefix = `$KV.${options.bucket}.${keyPrefix}`;
  const jsm = await jetstreamManager(nc, { timeout, checkAPI: false });
  const js = jetstream(nc, { timeout, checkAPI: false });
  const ci = await jsm.consumers.add(stream, {
    ack_policy: "none",
    deliver_policy: "last_per_subject",
    filter_subject: `${subjectPrefix}>`,
    mem_storage: true,
    num_replicas: 1,
    inactive_threshold: 60_000 * 1e6,
  });
  const latest = new Map<string, { live: boolean; value: Uint8Array }>();
  try {
    const consumer = js.consumers.getConsumerFromInfo(ci);
    let pending = ci.num_pending;
    while (pending > 0) {
      const messages = await consumer.fetch({
        max_messages: Math.min(pending, BATCH),
        expires: timeout,
      });
      let received = 0;
      for await (const m of messages) {
        received++;
        pending = m.info.pending;
        const op = m.headers?.get("KV-Operation") ?? "";
        const marker = m.headers?.has("Nats-Marker-Reason") ?? false;
        latest.set(m.subject.slice(subjectPrefix.length), {
          live: !marker && op !== "DEL" && op !== "PURGE",
          value: m.data,
        });
        if (pending === 0) break;
      }
      if (received === 0) break;
    }
  } finally {
    await jsm.consumers.delete(stream, ci.name).catch(() => {});
  }
  const entries: AuditEntry[] = [];
  for (const [name, { live, value }] of latest) {
    if (!live) continue;
    const legal = keyOf(name);
    entries.push(
      "reason" in legal
        ? { name, problem: "illegal_name", reason: legal.reason }
        : auditValue(legal.key, value),
    );
  }
  return sortedAudit(entries, []);
}
