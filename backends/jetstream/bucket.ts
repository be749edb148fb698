// Creating a KV bucket the jetstream backend accepts: the operator's job, not the backend's (it
// only binds). A bucket with what history needs is two streams: the bucket's own (`KV_<bucket>`,
// as the NATS KV client makes it, but keeping every message of a key: versions live there until
// they are moved out), and its history stream (`KVH_<bucket>`, where they are moved). The first
// message of a new bucket is its anchor, which nothing removes (see mover.ts). An existing bucket
// is given what it lacks, keeping every memory.

import type { NatsConnection } from "@nats-io/nats-core";
import {
  DiscardPolicy,
  JetStreamApiError,
  type JetStreamManager,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
  type StreamInfo,
} from "@nats-io/jetstream";
import { ConfigError, UnavailableError } from "../../store/errors.ts";
import type { BucketSettings } from "./bucket_settings.ts";
import { checkBucket, historyStream, missingForHistory } from "./bind.ts";
import { ANCHOR_NAME, JETSTREAM_HISTORY_MIN_VALUE_SIZE } from "./wire.ts";
import { ensureReviewStream } from "./review_stream.ts";

const STREAM_NOT_FOUND = 10059;
const DUPLICATE_WINDOW_NS = 120e9;
const ANCHOR_WAIT_MS = 15_000;

/**
 * Creates the bucket with what history needs, or gives an existing bucket what it lacks of it
 * (an existing bucket's other settings are left as they are; opening it tells whether they pass).
 *
 * @param nc A NATS connection (borrowed, never closed).
 * @param s The settings.
 * @param timeout Milliseconds each request may take.
 * @returns `"created"`, `"upgraded"` (history added to an existing bucket), or `"exists"`.
 */
export async function createJetStreamBucket(
  nc: NatsConnection,
  s: BucketSettings,
  timeout = 5_000,
): Promise<"created" | "upgraded" | "exists"> {
  const jsm = await jetstreamManager(nc, { timeout, checkAPI: false });
  const head = `[memory:jetstream] Cannot create bucket "${s.bucket}"`;
  try {
    const si = await info(jsm, `KV_${s.bucket}`);
    const hsi = await info(jsm, historyStream(s.bucket));
    if (si === undefined) {
      await jsm.streams.add(bucketStream(s));
      await writeAnchor(jsm, s.bucket);
      if (hsi === undefined) await jsm.streams.add(historyConfig(s));
      await ensureReviewStream(jsm, s, undefined);
      return "created";
    }
    // The review stream (review_stream.ts) is given to every bucket that lacks it.
    const reviewAdded = await ensureReviewStream(jsm, s, si);
    if (missingForHistory(s.bucket, si, hsi) === undefined) {
      return reviewAdded ? "upgraded" : "exists";
    }
    // A bucket the backend refuses for other reasons (a TTL, say) is reported, not changed.
    checkBucket(s.bucket, { ...si, config: { ...si.config, max_msg_size: -1 } });
    const size = si.config.max_msg_size ?? -1;
    const perKey = si.config.max_msgs_per_subject ?? 0;
    if (perKey > 0 || (size > 0 && size < JETSTREAM_HISTORY_MIN_VALUE_SIZE)) {
      // Every message of a key kept, and room for a version's headers.
      await jsm.streams.update(si.config.name, {
        ...si.config,
        max_msgs_per_subject: -1,
        max_msg_size: size > 0 ? Math.max(size, JETSTREAM_HISTORY_MIN_VALUE_SIZE) : size,
      });
    }
    if (hsi === undefined) {
      // The history stream is placed like the bucket.
      await jsm.streams.add(historyConfig({
        ...s,
        replicas: si.config.num_replicas,
        storage: si.config.storage === StorageType.Memory ? "memory" : "file",
      }));
    }
    const anchored = await jsm.streams.getMessage(si.config.name, {
      last_by_subj: `$KV.${s.bucket}.${ANCHOR_NAME}`,
    }).catch(() => null);
    if (anchored === null) await writeAnchor(jsm, s.bucket);
    return "upgraded";
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    // The server's own reason (no address, no credential in it), e.g. too many replicas.
    if (e instanceof JetStreamApiError) {
      throw new ConfigError(`${head}: the server refused: ${e.message}`, { cause: e });
    }
    throw new UnavailableError(`${head}: ${e instanceof Error ? e.name : "unknown error"}`, {
      cause: e,
    });
  }
}

async function info(jsm: JetStreamManager, name: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(name);
  } catch (e) {
    if (e instanceof JetStreamApiError && e.code === STREAM_NOT_FOUND) return undefined;
    throw e;
  }
}

// The bucket's stream: what the NATS KV client makes, keeping every message of a key.
function bucketStream(s: BucketSettings): Partial<StreamConfig> & { name: string } {
  return {
    name: `KV_${s.bucket}`,
    subjects: [`$KV.${s.bucket}.>`],
    retention: RetentionPolicy.Limits,
    max_msgs_per_subject: -1,
    max_msgs: -1,
    max_bytes: -1,
    max_age: 0,
    max_msg_size: s.maxValueSize,
    storage: s.storage === "memory" ? StorageType.Memory : StorageType.File,
    num_replicas: s.replicas,
    discard: DiscardPolicy.New,
    allow_rollup_hdrs: true,
    deny_delete: true,
    deny_purge: false,
    allow_direct: true,
    duplicate_window: DUPLICATE_WINDOW_NS,
  };
}

// The history stream: every pack it is given, for good (the library prunes it).
function historyConfig(s: BucketSettings): Partial<StreamConfig> & { name: string } {
  return {
    name: historyStream(s.bucket),
    subjects: [`$KVH.${s.bucket}.>`],
    retention: RetentionPolicy.Limits,
    max_msgs_per_subject: -1,
    max_msgs: -1,
    max_bytes: -1,
    max_age: 0,
    max_msg_size: -1,
    storage: s.storage === "memory" ? StorageType.Memory : StorageType.File,
    num_replicas: s.replicas,
    discard: DiscardPolicy.New,
    deny_delete: true,
    deny_purge: false,
    allow_direct: true,
    duplicate_window: DUPLICATE_WINDOW_NS,
  };
}

// Writes the anchor. A replicated stream just made takes a few seconds before its first write.
async function writeAnchor(jsm: JetStreamManager, bucket: string): Promise<void> {
  const data = new TextEncoder().encode(
    "agentmem bucket anchor: keep this message; it makes purges of deleted keys durable\n",
  );
  const js = jsm.jetstream();
  const until = Date.now() + ANCHOR_WAIT_MS;
  for (;;) {
    try {
      await js.publish(`$KV.${bucket}.${ANCHOR_NAME}`, data);
      return;
    } catch (e) {
      if (Date.now() > until || e instanceof JetStreamApiError) throw e;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
