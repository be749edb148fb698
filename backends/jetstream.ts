/**
 * The jetstream backend: memories in a NATS JetStream key-value bucket the operator created,
 * shared by many processes and machines (NATS replicates it; this backend only binds). Keys live
 * under `<prefix>.<key>`; writes are revision-checked, so of racing writers exactly one wins; with
 * history (the default) every write is its own version; the capacity check is exact between
 * creates that do not overlap; every call has a deadline and honours `opts.signal`. The NATS
 * modules load on first open, and the host's connection is never closed. What opening refuses and
 * why: docs/backends.md; what the bucket holds and why: docs/design/jetstream.md.
 *
 * @module
 */

import type { NatsConnection } from "@nats-io/nats-core";
import type { JetStreamClient, JetStreamManager, StreamInfo } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { ConfigError } from "../store/errors.ts";
import { decodeOptions } from "../store/options.ts";
import { registerBackend } from "../store/registry.ts";
import type { Store } from "../store/types.ts";
import { buildStore, readOnlyStore } from "../store/build.ts";
import { describeType } from "../store/text.ts";
import { JetStreamBackend } from "./jetstream/backend.ts";
import {
  atLeast,
  BIND_TIMEOUT_MS,
  bindFailure,
  checkBucket,
  checkBucketName,
  checkConnection,
  checkServerVersion,
  checkTimeout,
  historyRefusal,
  historyStream,
  instanceOf,
  keepsHistory,
  missingForHistory,
  probePurge,
  resolvePrefix,
} from "./jetstream/bind.ts";
import {
  apiCode,
  BACKEND,
  errorName,
  PREFIX,
  STREAM_NOT_FOUND,
  withDeadline,
} from "./jetstream/errors.ts";
import {
  ANCHOR_NAME,
  JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  JETSTREAM_MIN_VALUE_SIZE,
  LEGACY_HISTORY_MIN_VALUE_SIZE,
  ROLLUP_HEADER_BYTES,
} from "./jetstream/wire.ts";
import { Keeper } from "./jetstream/keeper.ts";
import { MarkerPurger } from "./jetstream/markers.ts";
import { NoHistory } from "./jetstream/step.ts";
import { DIRECT_TIMEOUT_MS } from "./jetstream/messages.ts";
import { directGets } from "./jetstream/direct.ts";
import { HISTORY_OPTION, retentionOf } from "../store/retention.ts";
import { REVIEW_OPTION, reviewModeOf } from "../store/review.ts";
import { reviewStream } from "./jetstream/proposals.ts";
import type { VersionedStoreOptions } from "../store/types.ts";
import {
  bucketInitCommand,
  type BucketSettings as JetStreamBucketSettings,
} from "./jetstream/bucket_settings.ts";

export { JETSTREAM_HISTORY_MIN_VALUE_SIZE, JETSTREAM_MIN_VALUE_SIZE };
export type { BucketSettings as JetStreamBucketSettings } from "./jetstream/bucket_settings.ts";

/**
 * The command that creates a bucket with `settings` and what history needs, or adds that to an
 * existing bucket, keeping every memory (what `agentmem bucket init` prints, and what opening a
 * bucket that lacks it names). A bucket with history is two streams and an anchor message, which
 * no single NATS CLI command makes.
 *
 * @example
 * ```ts
 * import { jetStreamBucketCommand } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const command = jetStreamBucketCommand({
 *   bucket: "agentmem",
 *   replicas: 3,
 *   storage: "file",
 *   maxValueSize: 70556,
 * });
 * assert.equal(
 *   command,
 *   "agentmem bucket init --bucket=agentmem --replicas=3 --storage=file --max-value-size=70556",
 * );
 * ```
 *
 * @param settings The bucket's name, replicas, storage and max value size.
 * @returns The command line.
 */
export function jetStreamBucketCommand(settings: JetStreamBucketSettings): string {
  return bucketInitCommand(settings.bucket, settings);
}

/**
 * Creates a memory bucket the jetstream backend accepts, with what history needs: the bucket's
 * stream keeping every message of a key, its history stream `KVH_<bucket>`, and an anchor message.
 * An existing bucket is given what it lacks of that, keeping every memory; its other settings are
 * left as they are (opening it tells whether they pass the backend's checks). The backend itself
 * only binds; this is for the operator (`agentmem bucket init`) and for setup code.
 *
 * @param nc A NATS connection (borrowed, never closed).
 * @param settings The bucket's name, replicas, storage and max value size.
 * @param options `timeout`: milliseconds each request may take (default 5000).
 * @returns `"created"`, `"upgraded"` (history added to an existing bucket), or `"exists"` when
 * the bucket had everything already.
 * @throws {ConfigError} when the server refuses the settings (too many replicas, say).
 * @throws {UnavailableError} when NATS does not answer.
 */
export async function createJetStreamBucket(
  nc: NatsConnectionLike,
  settings: JetStreamBucketSettings,
  options: { readonly timeout?: number | undefined } = {},
): Promise<"created" | "upgraded" | "exists"> {
  const { createJetStreamBucket: create } = await import("./jetstream/bucket.ts");
  return await create(nc as unknown as NatsConnection, settings, options.timeout ?? 5_000);
}

/** Options of the jetstream backend. */
export interface JetStreamStoreOptions extends VersionedStoreOptions {
  /** The KV bucket's name. The operator creates it; the backend only binds. */
  readonly bucket: string;
  /**
   * The key prefix: memories live under `<prefix>.<key>`. Omitted, it is the run's identity;
   * `""` means a flat keyspace (the whole bucket). A prefix is a legal key without a dot.
   */
  readonly prefix?: string | undefined;
  /**
   * Milliseconds a call may take before it fails with `UnavailableError` (default 5000). A call
   * may make a few requests; the deadline covers them all.
   */
  readonly timeout?: number | undefined;
  /**
   * Never write anything (default false): writes are refused with `ReadOnlyError`. A read-only
   * store may open with history off on a bucket that keeps history, which a writing one may not.
   */
  readonly readOnly?: boolean | undefined;
}

/**
 * The host's NATS connection, as `connect()` from `@nats-io/transport-node` returns it. Only the
 * members the backend checks at open are named, so this package's public types do not pull in the
 * NATS client's; any `NatsConnection` fits.
 */
export interface NatsConnectionLike {
  /** Sends a request and resolves with the reply. */
  request(...args: never[]): Promise<unknown>;
  /** Subscribes to a subject. */
  subscribe(...args: never[]): unknown;
  /** `true` once the connection is closed. */
  isClosed(): boolean;
}

/** What the jetstream backend takes from the host. */
export interface JetStreamDeps {
  /** The host's NATS connection. Borrowed: never closed, drained or reconfigured. */
  readonly nc: NatsConnectionLike;
  /** The run's identity, the default key prefix. */
  readonly identity?: string | undefined;
  /**
   * Told about a setting that works but costs something, such as a NATS user that may not purge
   * the bucket's stream (delete markers are then kept for good, and slow listing as they
   * accumulate). Default: `console.warn`.
   */
  readonly onWarning?: ((message: string) => void) | undefined;
  /**
   * The clock delete markers are aged by (milliseconds since the epoch, default `Date.now`): a
   * listing purges the markers it meets that are older than 30 minutes by it. A host has no need
   * of it; tests make every marker old at once with a clock that runs ahead.
   */
  readonly now?: (() => number) | undefined;
}

const JETSTREAM_OPTIONS = {
  bucket: {
    type: "string",
    required: true,
    description: "the KV bucket, created beforehand by the operator",
  },
  prefix: {
    type: "string",
    description: 'the key prefix; default the run\'s identity, "" for a flat keyspace',
  },
  readBeforeUpdate: {
    type: "boolean",
    description: "refuse an update of a key this run has not read (default true)",
  },
  timeout: {
    type: "number",
    description: "milliseconds a call may take before it fails (default 5000)",
  },
  history: HISTORY_OPTION,
  review: REVIEW_OPTION,
  readOnly: { type: "boolean", description: "never write anything (default false)" },
} as const;

type Client = {
  readonly jetstream: typeof import("@nats-io/jetstream").jetstream;
  readonly Kvm: typeof import("@nats-io/kv").Kvm;
  readonly headers: typeof import("@nats-io/nats-core").headers;
};

let client: Promise<Client> | undefined;

// The NATS modules load on first use, so a host that only uses the file backend never loads them.
function loadClient(): Promise<Client> {
  client ??= Promise.all([
    import("@nats-io/jetstream"),
    import("@nats-io/kv"),
    import("@nats-io/nats-core"),
  ]).then(
    ([jsModule, kvModule, core]) => ({
      jetstream: jsModule.jetstream,
      Kvm: kvModule.Kvm,
      headers: core.headers,
    }),
    (e) => {
      client = undefined;
      throw new ConfigError(`${PREFIX} Cannot load the NATS client modules`, { cause: e });
    },
  );
  return client;
}

/**
 * Opens a store over a JetStream KV bucket the operator created beforehand.
 *
 * @example Bind to a bucket (needs a NATS server with JetStream and the bucket)
 * ```ts ignore
 * import { openJetStreamStore, Scope } from "@agentmem/memory";
 * import { connect } from "@nats-io/transport-node";
 *
 * const nc = await connect({ servers: "nats://127.0.0.1:4222", maxReconnectAttempts: -1 });
 * const store = await openJetStreamStore({ bucket: "memory" }, { nc, identity: "agent-7" });
 * const scope = new Scope();
 * await store.create("todo", "What is left to do", "Ship the release", { scope });
 * await store.update("todo", "What is left to do", "Nothing", { scope });
 * ```
 *
 * @param options The bucket, the prefix, read-before-update and the per-call timeout.
 * @param deps The host's NATS connection (borrowed, never closed), the run's identity, and where
 * warnings go.
 * @returns The store.
 * @throws {ConfigError} on invalid options, a missing or closed connection, no prefix and no
 * identity, a missing bucket (the message says how to create it), a bucket whose settings could
 * lose or refuse memories, or a replicated bucket on a server older than 2.9.21.
 * @throws {UnavailableError} when NATS does not answer within 10 seconds.
 */
export async function openJetStreamStore(
  options: JetStreamStoreOptions,
  deps: JetStreamDeps,
): Promise<Store> {
  const decoded = decodeOptions(BACKEND, options, JETSTREAM_OPTIONS);
  const bucket = checkBucketName(decoded.bucket);
  const timeout = checkTimeout(decoded.timeout);
  if (deps === null || typeof deps !== "object") {
    throw new ConfigError(
      `${PREFIX} Invalid dependencies for the jetstream backend: expected { nc, identity?, onWarning?, now? }, got ${
        describeType(deps)
      }`,
    );
  }
  const prefix = resolvePrefix(decoded.prefix, deps.identity);
  const nc = checkConnection(deps.nc);
  const warn = checkWarn(deps.onWarning);
  const now = checkNow(deps.now);
  const { jetstream, Kvm, headers } = await loadClient();

  const retention = retentionOf(BACKEND, decoded.history);
  const review = reviewModeOf(BACKEND, decoded.review, retention !== undefined);

  // The clients wrap the host's connection; making them sends nothing and changes nothing on it.
  let clients: { bindKv: KV; bindJsm: JetStreamManager; js: JetStreamClient };
  try {
    const js = jetstream(nc, { timeout, checkAPI: false });
    // Construction has its own 10-second budget; calls get the configured timeout.
    const bindJs = jetstream(nc, { timeout: BIND_TIMEOUT_MS, checkAPI: false });
    clients = {
      bindKv: await new Kvm(bindJs).open(bucket),
      bindJsm: await bindJs.jetstreamManager(false),
      js,
    };
  } catch (e) {
    throw new ConfigError(
      `${PREFIX} Cannot open memory: the NATS client cannot use dependency "nc" (${errorName(e)})`,
      { cause: e },
    );
  }
  const { bindKv, bindJsm, js } = clients;
  const stream = `KV_${bucket}`;
  const [status, purge, hsi, anchor, rsi] = await withDeadline(
    Promise.all([
      bindKv.status(),
      probePurge(bindJsm, stream, bucket),
      historyInfo(bindJsm, bucket),
      retention === undefined ? undefined : anchorOf(bindJsm, stream, bucket),
      review === false ? undefined : streamInfo(bindJsm, reviewStream(bucket)),
    ]),
    { ms: BIND_TIMEOUT_MS, signal: undefined, fail: (why) => bindFailure(bucket, why) },
  ).catch((e) => {
    throw bindFailure(bucket, e);
  });
  const si = status.streamInfo;
  const keepsAll = (si.config.max_msgs_per_subject ?? 0) <= 0;
  checkBucket(
    bucket,
    si,
    retention !== undefined
      ? LEGACY_HISTORY_MIN_VALUE_SIZE
      : JETSTREAM_MIN_VALUE_SIZE + (keepsAll ? ROLLUP_HEADER_BYTES : 0),
  );
  checkServerVersion(bucket, si.config.num_replicas, nc.info?.version);
  if (retention !== undefined) {
    const missing = missingForHistory(bucket, si, hsi);
    if (missing !== undefined) throw historyRefusal(bucket, missing);
    const size = si.config.max_msg_size ?? -1;
    if (size > 0 && size < JETSTREAM_HISTORY_MIN_VALUE_SIZE) {
      warn(
        `${PREFIX} Memory bucket "${bucket}": its max value size (${size} bytes) is below the ${JETSTREAM_HISTORY_MIN_VALUE_SIZE} bytes the largest memory takes with its version's headers, so a write whose entry and provenance are both near their limits is refused; raise it, keeping every memory, with: ${
          bucketInitCommand(bucket)
        }`,
      );
    }
  } else if (hsi !== undefined && !decoded.readOnly) {
    throw keepsHistory(bucket);
  }
  if (review !== false && rsi === undefined) {
    throw new ConfigError(
      `${PREFIX} Cannot open memory bucket "${bucket}" with option "review": it has no review stream (${
        reviewStream(bucket)
      }); \`${bucketInitCommand(bucket, {})}\` adds it, keeping every memory`,
    );
  }
  const denied = si.config.deny_purge === true;
  if (denied) {
    warn(
      `${PREFIX} Memory bucket "${bucket}": its stream denies purges (deny_purge), so delete markers will be kept for good, which slows listing as they accumulate; clear the stream's deny_purge setting to have old markers removed`,
    );
  } else if (!purge) {
    warn(
      `${PREFIX} Memory bucket "${bucket}": this NATS user may not purge the bucket's stream, so delete markers will be kept for good, which slows listing as they accumulate; grant publish permission on $JS.API.STREAM.PURGE.${si.config.name}`,
    );
  }

  const jsm = await js.jetstreamManager(false);
  const keyPrefix = prefix === "" ? "" : `${prefix}.`;
  // Direct gets where the stream has one replica (its only server answers them).
  const direct = {
    streams: new Set(
      [si, hsi].filter((i) =>
        i !== undefined && i.config.num_replicas <= 1 && i.config.allow_direct
      ).map((i) => i!.config.name),
    ),
    gets: directGets(nc),
    ms: Math.min(timeout, DIRECT_TIMEOUT_MS),
  };
  // nats-server 2.9 moves consumers past what they have not delivered when any subject of the
  // stream is purged (see jetstream/pull.ts); 2.10 does not.
  const purgesSkip = !atLeast(nc.info?.version, "2.10.0");
  const clock = now ?? Date.now;
  const target = {
    bucket,
    stream: si.config.name,
    timeout,
    nc,
    js,
    jsm,
    direct,
    purgesSkip,
    headers,
  };
  const history = retention === undefined
    ? new NoHistory({
      rollup: keepsAll ? headers : undefined,
      markers: new MarkerPurger({ ...target, warn }, purge && !denied),
    })
    : new Keeper({
      ...target,
      hstream: historyStream(bucket),
      subjectPrefix: `$KV.${bucket}.${keyPrefix}`,
      hsubjectPrefix: `$KVH.${bucket}.${keyPrefix}`,
      namePrefix: keyPrefix,
      anchor,
      retention,
    }, { now: clock });
  const store = buildStore(
    new JetStreamBackend({
      ...target,
      created: si.created,
      instance: instanceOf(si),
      prefix,
      readBeforeUpdate: decoded.readBeforeUpdate ?? true,
      maxMsgSize: si.config.max_msg_size ?? -1,
      history,
      now: clock,
    }),
    { review },
  );
  return decoded.readOnly ? readOnlyStore(store) : store;
}

// The bucket's history stream, or `undefined` when it has none.
function historyInfo(jsm: JetStreamManager, bucket: string): Promise<StreamInfo | undefined> {
  return streamInfo(jsm, historyStream(bucket));
}

// A stream's info, or `undefined` when there is no such stream.
async function streamInfo(jsm: JetStreamManager, name: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(name);
  } catch (e) {
    if (apiCode(e) === STREAM_NOT_FOUND) return undefined;
    throw e;
  }
}

// The sequence of the bucket's anchor (see mover.ts), or `undefined` when it has none.
async function anchorOf(
  jsm: JetStreamManager,
  stream: string,
  bucket: string,
): Promise<number | undefined> {
  try {
    const m = await jsm.streams.getMessage(stream, {
      last_by_subj: `$KV.${bucket}.${ANCHOR_NAME}`,
    });
    return m?.seq;
  } catch {
    return undefined;
  }
}

function checkWarn(onWarning: unknown): (message: string) => void {
  if (onWarning === undefined) return (message) => console.warn(message);
  if (typeof onWarning !== "function") {
    throw new ConfigError(
      `${PREFIX} Cannot open memory: dependency "onWarning" must be a function, got ${
        describeType(onWarning)
      }`,
    );
  }
  return (message) => {
    try {
      (onWarning as (message: string) => void)(message);
    } catch {
      // A warning must never fail the call that noticed it.
    }
  };
}

function checkNow(now: unknown): (() => number) | undefined {
  if (now === undefined || typeof now === "function") return now as (() => number) | undefined;
  throw new ConfigError(
    `${PREFIX} Cannot open memory: dependency "now" must be a function, got ${describeType(now)}`,
  );
}

registerBackend(BACKEND, {
  options: JETSTREAM_OPTIONS,
  open: (options, deps, context) =>
    openJetStreamStore({
      ...options,
      // Checked by openJetStreamStore, as every option is.
      review: options.review as JetStreamStoreOptions["review"],
      readOnly: options.readOnly === true || context?.readOnly === true,
    }, {
      nc: deps.nc as unknown as NatsConnection,
      identity: deps.identity,
      onWarning: deps.onWarning as ((message: string) => void) | undefined,
      now: deps.now as (() => number) | undefined,
    }),
});
