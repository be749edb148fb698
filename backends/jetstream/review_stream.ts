// The bucket's review stream (`KVR_<bucket>`, subjects `$KVR.<bucket>.>`), where a store with
// option `review` keeps the writes it holds (proposals.ts): made by `agentmem bucket init` beside
// the bucket's two streams, placed like the bucket. Its first message is an anchor, which nothing
// removes, so purging a decided proposal is durable (see mover.ts on purges at a stream's head).

import {
  DiscardPolicy,
  JetStreamApiError,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
  type StreamInfo,
} from "@nats-io/jetstream";
import type { BucketSettings } from "./bucket_settings.ts";
import { reviewStream, reviewSubjects } from "./proposals.ts";

const STREAM_NOT_FOUND = 10059;
const ANCHOR_WAIT_MS = 15_000;

/**
 * Makes the review stream of `s.bucket` when it is missing, placed like the bucket's stream `like`
 * (when there is one); `true` when it made it.
 */
export async function ensureReviewStream(
  jsm: JetStreamManager,
  s: BucketSettings,
  like: StreamInfo | undefined,
): Promise<boolean> {
  const name = reviewStream(s.bucket);
  try {
    await jsm.streams.info(name);
    return false;
  } catch (e) {
    if (!(e instanceof JetStreamApiError && e.code === STREAM_NOT_FOUND)) throw e;
  }
  const storage = like === undefined
    ? (s.storage === "memory" ? StorageType.Memory : StorageType.File)
    : like.config.storage;
  await jsm.streams.add(
    reviewConfig(name, s.bucket, like?.config.num_replicas ?? s.replicas, storage),
  );
  await writeAnchor(jsm, s.bucket);
  return true;
}

function reviewConfig(
  name: string,
  bucket: string,
  replicas: number,
  storage: StorageType,
): Partial<StreamConfig> & { name: string } {
  return {
    name,
    subjects: [reviewSubjects(bucket)],
    retention: RetentionPolicy.Limits,
    max_msgs_per_subject: -1,
    max_msgs: -1,
    max_bytes: -1,
    max_age: 0,
    max_msg_size: -1,
    storage,
    num_replicas: replicas,
    discard: DiscardPolicy.New,
    deny_delete: true,
    deny_purge: false,
    allow_direct: true,
  };
}

// A replicated stream just made takes a few seconds before its first write.
async function writeAnchor(jsm: JetStreamManager, bucket: string): Promise<void> {
  const data = new TextEncoder().encode(
    "agentmem review anchor: keep this message; it makes purges of decided proposals durable\n",
  );
  const js = jsm.jetstream();
  const until = Date.now() + ANCHOR_WAIT_MS;
  for (;;) {
    try {
      await js.publish(`$KVR.${bucket}.~anchor`, data);
      return;
    } catch (e) {
      if (Date.now() > until || e instanceof JetStreamApiError) throw e;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
