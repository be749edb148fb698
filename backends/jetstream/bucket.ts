// Creating a KV bucket the jetstream backend accepts: the operator's job, not the backend's (it
// only binds). The settings are the ones the backend checks for: one value per key, no TTL, a max
// value size that fits the largest entry and a write's headers.

import type { NatsConnection } from "@nats-io/nats-core";
import { JetStreamApiError, jetstreamManager, StorageType } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { ConfigError, UnavailableError } from "../../store/errors.ts";
import type { BucketSettings } from "./bucket_settings.ts";

const STREAM_NOT_FOUND = 10059;

/**
 * Creates the bucket unless a bucket of that name exists, which is left as it is.
 *
 * @param nc A NATS connection (borrowed, never closed).
 * @param s The settings.
 * @param timeout Milliseconds each request may take.
 * @returns `"created"`, or `"exists"` when the bucket was already there.
 */
export async function createJetStreamBucket(
  nc: NatsConnection,
  s: BucketSettings,
  timeout = 5_000,
): Promise<"created" | "exists"> {
  const jsm = await jetstreamManager(nc, { timeout, checkAPI: false });
  try {
    await jsm.streams.info(`KV_${s.bucket}`);
    return "exists";
  } catch (e) {
    if (!(e instanceof JetStreamApiError) || e.code !== STREAM_NOT_FOUND) throw e;
  }
  try {
    await new Kvm(jsm.jetstream()).create(s.bucket, {
      history: 1,
      ttl: 0,
      replicas: s.replicas,
      storage: s.storage === "memory" ? StorageType.Memory : StorageType.File,
      maxValueSize: s.maxValueSize,
    });
  } catch (e) {
    // The server's own reason (no address, no credential in it), e.g. too many replicas.
    if (e instanceof JetStreamApiError) {
      throw new ConfigError(
        `[memory:jetstream] Cannot create bucket "${s.bucket}": the server refused: ${e.message}`,
        { cause: e },
      );
    }
    throw new UnavailableError(
      `[memory:jetstream] Cannot create bucket "${s.bucket}": ${
        e instanceof Error ? e.name : "unknown error"
      }`,
      { cause: e },
    );
  }
  return "created";
}
