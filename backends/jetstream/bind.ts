// Binding a jetstream store: the checks on its options and connection, and the refusals of a
// bucket (or a server) that would lose or refuse memories.

import type { NatsConnection } from "@nats-io/nats-core";
import type { JetStreamManager, StreamInfo } from "@nats-io/jetstream";
import { ConfigError, MemoryError, UnavailableError } from "../../store/errors.ts";
import { validateKey } from "../../store/validate.ts";
import { describeType, quote } from "../../store/text.ts";
import { apiCode, errorName, PREFIX, reason, STREAM_NOT_FOUND } from "./errors.ts";
import { JETSTREAM_HISTORY_MIN_VALUE_SIZE, JETSTREAM_MIN_VALUE_SIZE } from "./wire.ts";
import { bucketInitCommand } from "./bucket_settings.ts";

/** How long construction may take. */
export const BIND_TIMEOUT_MS = 10_000;
const DEFAULT_TIMEOUT_MS = 5_000;
const MAX_TIMEOUT_MS = 600_000;
const BUCKET_NAME = /^[-\w]+$/;
/**
 * The first nats-server release whose clustered revision checks are atomic (nats-server issue
 * 4320): before it, two updates from the same read can both be acknowledged on a replicated
 * stream.
 */
export const MIN_REPLICATED_SERVER = "2.9.21";

/** Checks the bucket name: letters, digits, `_` and `-`. */
export function checkBucketName(bucket: string): string {
  if (!BUCKET_NAME.test(bucket)) {
    throw new ConfigError(
      `${PREFIX} Invalid options for the jetstream backend: option "bucket" is ${
        quote(bucket)
      }; a bucket name is letters, digits, "_" and "-"`,
    );
  }
  return bucket;
}

/** The per-call timeout in milliseconds: default 5000, a whole number from 1 to 600000. */
export function checkTimeout(timeout: number | undefined): number {
  if (timeout === undefined) return DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > MAX_TIMEOUT_MS) {
    throw new ConfigError(
      `${PREFIX} Invalid options for the jetstream backend: option "timeout" is ${timeout}; it is a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`,
    );
  }
  return timeout;
}

/**
 * The key prefix: `""`, or the option or else the identity. A prefix is a legal key with no dot,
 * so that no prefix's keyspace can hold another's.
 */
export function resolvePrefix(prefix: string | undefined, identity: unknown): string {
  if (prefix === "") return "";
  const [value, source] = prefix !== undefined
    ? [prefix, 'option "prefix"']
    : [identity, 'the identity (the default prefix; set option "prefix" to choose another)'];
  if (value === undefined || value === null) {
    throw new ConfigError(
      `${PREFIX} Cannot open memory: neither option "prefix" nor an identity was given; set "prefix" to a name for this keyspace, or to "" for the whole bucket`,
    );
  }
  if (typeof value !== "string") {
    throw new ConfigError(
      `${PREFIX} Cannot open memory: ${source} must be a string, got ${describeType(value)}`,
    );
  }
  let problem: string | undefined;
  try {
    validateKey(value);
    if (value.includes(".")) problem = 'it contains "."';
  } catch {
    problem = "it is not a legal key";
  }
  if (problem !== undefined) {
    throw new ConfigError(
      `${PREFIX} Cannot open memory: ${source} is ${
        quote(value)
      } and ${problem}; a prefix is 1 to 200 characters from A-Z a-z 0-9 _ = -`,
    );
  }
  return value;
}

/** Checks that `nc` is an open NATS connection. */
export function checkConnection(nc: unknown): NatsConnection {
  const c = nc as Partial<NatsConnection> | null | undefined;
  if (
    c === null || typeof c !== "object" || typeof c.request !== "function" ||
    typeof c.subscribe !== "function" || typeof c.isClosed !== "function"
  ) {
    throw new ConfigError(
      `${PREFIX} Cannot open memory: dependency "nc" must be a NATS connection (from @nats-io/transport-node's connect()), got ${
        describeType(nc)
      }`,
    );
  }
  if (c.isClosed()) {
    throw new ConfigError(`${PREFIX} Cannot open memory: the NATS connection "nc" is closed`);
  }
  return c as NatsConnection;
}

/** How to create a bucket that passes every check: the CLI, or code; with history off, the NATS way. */
export function createHint(bucket: string): string {
  return `create it with: ${
    bucketInitCommand(bucket)
  } (add --replicas=3 on a cluster), or from code with createJetStreamBucket(nc, { bucket: "${bucket}", replicas: 1, storage: "file", maxValueSize: ${JETSTREAM_HISTORY_MIN_VALUE_SIZE} }); for a store opened with history: false, the NATS CLI's nats kv add ${bucket} --history=1 --storage=file --replicas=1 --max-value-size=${JETSTREAM_MIN_VALUE_SIZE} will do, or from code with @nats-io/kv: await new Kvm(nc).create("${bucket}", { history: 1, replicas: 1, maxValueSize: ${JETSTREAM_MIN_VALUE_SIZE} })`;
}

/**
 * The bucket instance a stream info describes, for the Scope namespace: the stream's creation
 * time, and its raft group when clustered (named anew when the stream is created or restored from
 * a backup, which keeps the creation time).
 */
export function instanceOf(si: StreamInfo): string {
  return si.cluster?.raft_group ? `${si.created}~${si.cluster.raft_group}` : si.created;
}

/** Turns a failure to bind into the error construction reports. */
export function bindFailure(bucket: string, e: unknown): MemoryError {
  if (e instanceof MemoryError) return e;
  const head = `${PREFIX} Cannot open memory bucket ${quote(bucket)}`;
  if (e === "timeout") {
    return new UnavailableError(
      `${head}: NATS did not answer within ${BIND_TIMEOUT_MS / 1000} seconds`,
    );
  }
  if (apiCode(e) === STREAM_NOT_FOUND) {
    return new ConfigError(
      `${head}: the bucket does not exist, and this backend never creates one; ${
        createHint(bucket)
      }`,
      { cause: e },
    );
  }
  if (errorName(e) === "JetStreamNotEnabled") {
    return new ConfigError(
      `${head}: JetStream is not enabled for this NATS account (no JetStream server answered)`,
      { cause: e },
    );
  }
  return new UnavailableError(
    `${head}: ${reason(e, bucket, `${BIND_TIMEOUT_MS / 1000} seconds`)}`,
    { cause: e },
  );
}

/**
 * Refuses a bucket whose settings would lose memories silently or refuse valid ones; `minimum`
 * is the max value size the store's writes need.
 */
export function checkBucket(
  bucket: string,
  si: StreamInfo,
  minimum = JETSTREAM_MIN_VALUE_SIZE,
): void {
  const head = `${PREFIX} Cannot use memory bucket ${quote(bucket)}`;
  const { max_age, max_msg_size, discard, max_bytes, max_msgs } = si.config;
  if (max_age > 0) {
    throw new ConfigError(
      `${head}: it has a TTL of ${
        max_age / 1e9
      } seconds, so memories would silently expire; use a bucket without a TTL (${
        createHint(bucket)
      })`,
    );
  }
  if (max_msg_size > 0 && max_msg_size < minimum) {
    throw new ConfigError(
      `${head}: its max value size is ${max_msg_size} bytes, below the ${minimum} bytes the largest valid memory takes on the wire (the entry plus the write's headers); raise it with: nats stream edit KV_${bucket} --max-msg-size=${minimum}`,
    );
  }
  if (discard === "old" && ((max_bytes ?? -1) > 0 || (max_msgs ?? -1) > 0)) {
    throw new ConfigError(
      `${head}: it discards its oldest entries when full, so memories would silently vanish; make it refuse new writes instead with: nats stream edit KV_${bucket} --discard=new`,
    );
  }
}

/**
 * Refuses a replicated bucket served by a nats-server older than `MIN_REPLICATED_SERVER`, whose
 * clustered revision checks are not atomic: two updates from one read could both be acknowledged
 * and one silently lost. A single-replica bucket is safe on any supported server.
 *
 * @param bucket The bucket, for the message.
 * @param replicas The bucket's replica count.
 * @param version The connected server's version (`nc.info.version`), when known.
 */
export function checkServerVersion(
  bucket: string,
  replicas: number,
  version: string | undefined,
): void {
  if (replicas <= 1 || version === undefined || !olderThan(version, MIN_REPLICATED_SERVER)) {
    return;
  }
  throw new ConfigError(
    `${PREFIX} Cannot use memory bucket ${
      quote(bucket)
    }: it has ${replicas} replicas and the NATS server is version ${version}, older than ${MIN_REPLICATED_SERVER}, whose clustered revision checks are not atomic, so concurrent updates would be silently lost (nats-server issue 4320); upgrade every server of the cluster to ${MIN_REPLICATED_SERVER} or later (2.10 recommended)`,
  );
}

/** Whether a server version is `minimum` or later (`false` when unknown). */
export function atLeast(version: string | undefined, minimum: string): boolean {
  return version !== undefined && !olderThan(version, minimum) &&
    !Number.isNaN(Number(version.replace(/^v/, "").split(/[.-]/)[0]));
}

// Compares dotted release numbers; a pre-release suffix ("-beta") counts as its release.
function olderThan(version: string, minimum: string): boolean {
  const parse = (v: string) => v.replace(/^v/, "").split(/[.-]/).slice(0, 3).map(Number);
  const [a, b] = [parse(version), parse(minimum)];
  for (let i = 0; i < 3; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (Number.isNaN(x)) return false;
    if (x !== y) return x < y;
  }
  return false;
}

/**
 * Whether this connection may purge the bucket's stream: old delete markers are purged rather
 * than kept for good. Asks with a purge that can remove nothing (a subject no key can have,
 * below sequence 1). `false` only when the server refuses the permission; any other failure
 * counts as permitted, and a later refused purge falls back then.
 */
export async function probePurge(
  jsm: JetStreamManager,
  stream: string,
  bucket: string,
): Promise<boolean> {
  try {
    await jsm.streams.purge(stream, { filter: `$KV.${bucket}.~agentmem-probe`, seq: 1 });
    return true;
  } catch (e) {
    return !isPermissionDenied(e);
  }
}

/** `true` when the server refused a request for lack of permission. */
export function isPermissionDenied(e: unknown): boolean {
  // The client reports it as a RequestError caused by a PermissionViolationError.
  for (let c = e, depth = 0; c instanceof Error && depth < 4; c = c.cause, depth++) {
    if (c.name === "PermissionViolationError" || c.message.startsWith("Permissions Violation")) {
      return true;
    }
  }
  return false;
}

/** The name of a bucket's history stream. */
export function historyStream(bucket: string): string {
  return `KVH_${bucket}`;
}

/**
 * What a bucket lacks for history, in words, or `undefined` when it has it all: a stream that
 * keeps every message of a key (a per-key limit would drop versions before they are moved out,
 * and after a server crash bring purged ones back), and a history stream for the moved versions
 * that keeps what it is given.
 */
export function missingForHistory(
  bucket: string,
  si: StreamInfo,
  hsi: StreamInfo | undefined,
): string | undefined {
  const missing: string[] = [];
  const perKey = si.config.max_msgs_per_subject ?? 0;
  if (perKey > 0) {
    missing.push(
      `its stream keeps ${perKey} message${
        perKey === 1 ? "" : "s"
      } per key (max_msgs_per_subject ${perKey}; history needs -1, every message)`,
    );
  }
  const name = historyStream(bucket);
  if (hsi === undefined) missing.push(`its history stream ${name} does not exist`);
  else {
    const c = hsi.config;
    const subject = `$KVH.${bucket}.>`;
    if (!(c.subjects ?? []).includes(subject)) {
      missing.push(`its history stream ${name} does not take the subjects ${subject}`);
    }
    if ((c.max_msgs_per_subject ?? 0) > 0) {
      missing.push(`its history stream ${name} keeps ${c.max_msgs_per_subject} message(s) per key`);
    }
    if (c.max_age > 0) missing.push(`its history stream ${name} expires messages (max_age)`);
    if (c.discard === "old" && ((c.max_bytes ?? -1) > 0 || (c.max_msgs ?? -1) > 0)) {
      missing.push(`its history stream ${name} discards its oldest messages when full`);
    }
    if (c.sealed) missing.push(`its history stream ${name} is sealed`);
  }
  return missing.length === 0 ? undefined : missing.join("; ");
}

/**
 * The refusal of a writing store opened with history off on a bucket that keeps history: its
 * writes would be versions no chain records, and a rollup would erase the versions kept.
 */
export function keepsHistory(bucket: string): ConfigError {
  return new ConfigError(
    `${PREFIX} Cannot open memory bucket ${
      quote(bucket)
    } with option "history": false: the bucket keeps history (its history stream ${
      historyStream(bucket)
    } exists), and a store that writes no versions would leave writes no version records and erase versions the bucket keeps; omit option "history" (or give { versions, days }), or open the store read-only`,
  );
}

/** The refusal of a bucket that lacks what history needs. */
export function historyRefusal(bucket: string, missing: string): ConfigError {
  return new ConfigError(
    `${PREFIX} Cannot use memory bucket ${
      quote(bucket)
    } with history (the default): ${missing}; add what history needs, keeping every memory, with: ${
      bucketInitCommand(bucket)
    }; or open the store with option "history": false`,
  );
}
