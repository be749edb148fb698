/**
 * The jetstream backend: memories in a NATS JetStream key-value bucket, shared by many processes
 * and machines. NATS replicates the bucket; this backend adds no distribution of its own.
 *
 * - It binds to a bucket the operator created and never creates one. At construction, under a
 *   10-second timeout, it refuses a missing bucket, a bucket whose entries expire (any TTL), a
 *   bucket that evicts old entries when full, and a max value size too small for the largest
 *   valid entry as it travels on the wire (`JETSTREAM_MIN_VALUE_SIZE`).
 * - Keys live under `<prefix>.<key>`; the prefix defaults to the run's identity, `""` is a flat
 *   keyspace. A prefix is a legal key without a dot, so no prefix's keyspace holds another's.
 * - `create` is a publish that expects the key to hold nothing (or a delete marker); `update` and
 *   `delete` expect the revision they saw, so of several racing writers exactly one wins.
 * - Read-before-update is enforced by default: `update` writes only at the revision this run's
 *   scope recorded for the key, under a namespace of bucket and prefix.
 * - Every call has a deadline (`timeout`, default 5 s) and honours `opts.signal`; a server that
 *   is down or slow yields `UnavailableError`, never a hang. A write that fails this way may or
 *   may not have been applied.
 * - The NATS client modules load on first open, so file-backend users never load them. The
 *   connection is the host's: this backend never closes, drains or reconfigures it.
 *
 * @module
 */

import type { NatsConnection } from "@nats-io/nats-core";
import type {
  ConsumerInfo,
  JetStreamClient,
  JetStreamManager,
  StreamInfo,
} from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import {
  ConfigError,
  CorruptError,
  ExistsError,
  MemoryError,
  NotFoundError,
  StaleError,
  UnavailableError,
} from "../store/errors.ts";
import { MAX_ENTRIES, MAX_ENTRY_BYTES } from "../store/limits.ts";
import { decodeOptions } from "../store/options.ts";
import { registerBackend } from "../store/registry.ts";
import { parseEntry, serializeValid } from "../store/serialize.ts";
import type { Entry, Info, Item, Store } from "../store/types.ts";
import { validateKey, type ValidWrite } from "../store/validate.ts";
import { CapacityGate } from "../store/_capacity.ts";
import { type BackendOps, buildStore, type Call } from "../store/_store.ts";
import { describeType, quote } from "../store/_text.ts";

/** Options of the jetstream backend. */
export interface JetStreamStoreOptions {
  /** The KV bucket's name. The operator creates it; the backend only binds. */
  readonly bucket: string;
  /**
   * The key prefix: memories live under `<prefix>.<key>`. Omitted, it is the run's identity;
   * `""` means a flat keyspace (the whole bucket). A prefix is a legal key without a dot.
   */
  readonly prefix?: string | undefined;
  /**
   * Refuse `update` of a key this run's scope has not read, or whose revision moved since
   * (default `true`). With `false`, `update` replaces unconditionally and creates a missing key,
   * as the file backend does.
   */
  readonly readBeforeUpdate?: boolean | undefined;
  /**
   * Milliseconds a call may take before it fails with `UnavailableError` (default 5000). A call
   * may make a few requests; the deadline covers them all.
   */
  readonly timeout?: number | undefined;
}

/** What the jetstream backend takes from the host. */
export interface JetStreamDeps {
  /** The host's NATS connection. Borrowed: never closed, drained or reconfigured. */
  readonly nc: NatsConnection;
  /** The run's identity, the default key prefix. */
  readonly identity?: string | undefined;
}

/**
 * The most header bytes a write of this backend carries. The server counts headers against a
 * bucket's max value size. A conditional write sends `Nats-Expected-Last-Subject-Sequence: <n>`,
 * which takes 51 bytes plus the digits of `n` on the wire (measured against nats-server 2.9.10:
 * "NATS/1.0", the header line and the CRLFs). Revisions pass through JavaScript numbers, exact up
 * to 2^53 - 1, which has 16 digits; the backend refuses to work past that revision.
 */
const MAX_WRITE_HEADER_BYTES = 51 + String(Number.MAX_SAFE_INTEGER).length;

/**
 * The smallest positive max value size a bucket may have: the largest serialized entry
 * (`MAX_ENTRY_BYTES`) plus the largest header a write carries (67 bytes). A bucket whose max value
 * size is unlimited (-1) or at least this accepts every valid entry through `create` and `update`.
 */
export const JETSTREAM_MIN_VALUE_SIZE: number = MAX_ENTRY_BYTES + MAX_WRITE_HEADER_BYTES;

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
} as const;

const BACKEND = "jetstream";
const PREFIX = `[memory:${BACKEND}]`;
const DEFAULT_TIMEOUT_MS = 5_000;
const MAX_TIMEOUT_MS = 600_000;
const BIND_TIMEOUT_MS = 10_000;
// A conditional write that loses a race re-reads and retries; a key that changes this often
// between a read and a write is reported as unavailable rather than retried forever.
const MAX_CAS_ATTEMPTS = 8;
// Messages per pull while listing: bounds what one pull can put on the wire (128 largest
// entries are about 9 MB) while keeping a listing to a handful of round trips.
const SCAN_BATCH = 128;
// The server removes a listing's consumer after this long without pulls if the delete that
// normally follows a listing is lost (the connection dropped, say).
const MIN_CONSUMER_IDLE_MS = 30_000;
const WRONG_LAST_SEQUENCE = 10071;
const STREAM_NOT_FOUND = 10059;
const MESSAGE_TOO_LARGE = 10054;
const BUCKET_NAME = /^[-\w]+$/;
const ENCODER = new TextEncoder();

type Client = {
  readonly jetstream: typeof import("@nats-io/jetstream").jetstream;
  readonly Kvm: typeof import("@nats-io/kv").Kvm;
};

let client: Promise<Client> | undefined;

// The NATS modules load on first use, so a host that only uses the file backend never loads them.
function loadClient(): Promise<Client> {
  client ??= Promise.all([import("@nats-io/jetstream"), import("@nats-io/kv")]).then(
    ([jsModule, kvModule]) => ({ jetstream: jsModule.jetstream, Kvm: kvModule.Kvm }),
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
 * @param deps The host's NATS connection (borrowed, never closed) and the run's identity.
 * @returns The store.
 * @throws {ConfigError} on invalid options, a missing or closed connection, no prefix and no
 * identity, a missing bucket (the message says how to create it), or a bucket whose settings
 * could lose or refuse memories.
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
      `${PREFIX} Invalid dependencies for the jetstream backend: expected { nc, identity? }, got ${
        describeType(deps)
      }`,
    );
  }
  const prefix = resolvePrefix(decoded.prefix, deps.identity);
  const nc = checkConnection(deps.nc);
  const { jetstream, Kvm } = await loadClient();

  // The clients wrap the host's connection; making them sends nothing and changes nothing on it.
  let clients: { bindKv: KV; js: JetStreamClient; jsm: JetStreamManager; kv: KV };
  try {
    const js = jetstream(nc, { timeout, checkAPI: false });
    clients = {
      // Construction has its own 10-second budget; calls get the configured timeout.
      bindKv: await new Kvm(jetstream(nc, { timeout: BIND_TIMEOUT_MS, checkAPI: false })).open(
        bucket,
      ),
      js,
      jsm: await js.jetstreamManager(false),
      kv: await new Kvm(js).open(bucket),
    };
  } catch (e) {
    throw new ConfigError(
      `${PREFIX} Cannot open memory: the NATS client cannot use dependency "nc" (${errorName(e)})`,
      { cause: e },
    );
  }
  const { bindKv, js, jsm, kv } = clients;
  const status = await withDeadline(
    bindKv.status(),
    BIND_TIMEOUT_MS,
    undefined,
    (why) => bindFailure(bucket, why),
  ).catch((e) => {
    throw bindFailure(bucket, e);
  });
  checkBucket(bucket, status.streamInfo);

  return buildStore(
    new JetStreamBackend({
      bucket,
      stream: status.streamInfo.config.name,
      prefix,
      readBeforeUpdate: decoded.readBeforeUpdate ?? true,
      timeout,
      js,
      jsm,
      kv,
    }),
  );
}

registerBackend(BACKEND, {
  options: JETSTREAM_OPTIONS,
  open: (options, deps) =>
    openJetStreamStore(options, {
      nc: deps.nc as NatsConnection,
      identity: deps.identity,
    }),
});

function checkBucketName(bucket: string): string {
  if (!BUCKET_NAME.test(bucket)) {
    throw new ConfigError(
      `${PREFIX} Invalid options for the jetstream backend: option "bucket" is ${
        quote(bucket)
      }; a bucket name is letters, digits, "_" and "-"`,
    );
  }
  return bucket;
}

function checkTimeout(timeout: number | undefined): number {
  if (timeout === undefined) return DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > MAX_TIMEOUT_MS) {
    throw new ConfigError(
      `${PREFIX} Invalid options for the jetstream backend: option "timeout" is ${timeout}; it is a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`,
    );
  }
  return timeout;
}

// A prefix is a legal key with no dot, so that no prefix's keyspace can hold another's.
function resolvePrefix(prefix: string | undefined, identity: unknown): string {
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

function checkConnection(nc: unknown): NatsConnection {
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

function createHint(bucket: string): string {
  return `create it with the NATS CLI: nats kv add ${bucket} --history=1 --storage=file --replicas=1 --max-value-size=${JETSTREAM_MIN_VALUE_SIZE} (--replicas=3 on a cluster); or from code with @nats-io/kv: await new Kvm(nc).create("${bucket}", { history: 1, replicas: 1, maxValueSize: ${JETSTREAM_MIN_VALUE_SIZE} })`;
}

function bindFailure(bucket: string, e: unknown): MemoryError {
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
  return new UnavailableError(`${head}: ${reason(e, `${BIND_TIMEOUT_MS / 1000} seconds`)}`, {
    cause: e,
  });
}

// Refuses a bucket whose settings would lose memories silently or refuse valid ones.
function checkBucket(bucket: string, si: StreamInfo): void {
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
  if (max_msg_size > 0 && max_msg_size < JETSTREAM_MIN_VALUE_SIZE) {
    throw new ConfigError(
      `${head}: its max value size is ${max_msg_size} bytes, below the ${JETSTREAM_MIN_VALUE_SIZE} bytes the largest valid memory takes on the wire (the entry plus the write's headers); raise it with: nats stream edit KV_${bucket} --max-msg-size=${JETSTREAM_MIN_VALUE_SIZE}`,
    );
  }
  if (discard === "old" && ((max_bytes ?? -1) > 0 || (max_msgs ?? -1) > 0)) {
    throw new ConfigError(
      `${head}: it discards its oldest entries when full, so memories would silently vanish; make it refuse new writes instead with: nats stream edit KV_${bucket} --discard=new`,
    );
  }
}

/** One key's latest message: a live entry or a delete marker. */
interface Latest {
  readonly live: boolean;
  readonly revision: number;
  readonly value: Uint8Array;
}

interface BackendConfig {
  readonly bucket: string;
  readonly stream: string;
  readonly prefix: string;
  readonly readBeforeUpdate: boolean;
  readonly timeout: number;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly kv: KV;
}

type Op = "list" | "read" | "create" | "update" | "delete";

/** A call's time budget, and whether its caller has stopped waiting. */
class Deadline {
  readonly #end: number;
  #cancelled = false;
  readonly #onCancel: Array<() => void> = [];

  constructor(ms: number) {
    this.#end = Date.now() + ms;
  }

  /** Milliseconds left, at least 1. */
  left(): number {
    return Math.max(1, this.#end - Date.now());
  }

  get cancelled(): boolean {
    return this.#cancelled;
  }

  onCancel(fn: () => void): void {
    if (this.#cancelled) fn();
    else this.#onCancel.push(fn);
  }

  cancel(): void {
    if (this.#cancelled) return;
    this.#cancelled = true;
    for (const fn of this.#onCancel.splice(0)) fn();
  }
}

class JetStreamBackend implements BackendOps {
  readonly info: Info;
  readonly #c: BackendConfig;
  // The Scope namespace: a revision recorded here never authorizes a write in another store.
  readonly #ns: string;
  // The key's prefix inside the bucket ("alice." or "").
  readonly #keyPrefix: string;
  // What precedes a key in a message subject ("$KV.<bucket>.alice.").
  readonly #subjectPrefix: string;
  readonly #filter: string;
  readonly #capacity = new CapacityGate();

  constructor(config: BackendConfig) {
    this.#c = config;
    const { bucket, prefix } = config;
    this.info = { backend: BACKEND, location: prefix === "" ? bucket : `${bucket}/${prefix}` };
    this.#ns = `${BACKEND}:${bucket}/${prefix}`;
    this.#keyPrefix = prefix === "" ? "" : `${prefix}.`;
    this.#subjectPrefix = `$KV.${bucket}.${this.#keyPrefix}`;
    this.#filter = `${this.#subjectPrefix}>`;
  }

  list(call: Call): Promise<Item[]> {
    return this.#run("list", undefined, call, async (d) => {
      const latest = await this.#scan(d);
      const items: Item[] = [];
      for (const [key, entry] of latest) {
        try {
          items.push({ key, description: parseEntry(entry.value, key).description });
        } catch (e) {
          // An entry read() could not return is not listed either.
          if (!(e instanceof CorruptError)) throw e;
        }
      }
      return items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    });
  }

  read(key: string, call: Call): Promise<Entry> {
    return this.#run("read", key, call, async (d) => {
      const latest = await this.#get(key);
      if (latest === undefined || !latest.live) {
        throw new NotFoundError(
          `${PREFIX} Cannot read memory ${quote(key)}: no memory has this key`,
          { key },
        );
      }
      const entry = parseEntry(latest.value, key);
      this.#record(call, d, key, latest.revision);
      return entry;
    });
  }

  create(w: ValidWrite, call: Call): Promise<void> {
    return this.#run("create", w.key, call, async (d) => {
      try {
        await this.#capacity.check(w.key, () => this.#count(d));
      } catch (e) {
        // A full store still says "exists" for a key it holds: that is the answer a caller can use.
        if ((await this.#get(w.key))?.live) throw exists(w.key);
        throw e;
      }
      const data = ENCODER.encode(serializeValid(w.description, w.content));
      // Expect nothing under the key; when a delete marker is there, expect that marker.
      let expected = 0;
      for (let attempt = 1;; attempt++) {
        try {
          const revision = await this.#put(w.key, data, expected, d);
          this.#record(call, d, w.key, revision);
          return;
        } catch (e) {
          if (apiCode(e) !== WRONG_LAST_SEQUENCE) throw e;
        }
        const latest = await this.#get(w.key);
        if (latest?.live) throw exists(w.key);
        if (attempt >= MAX_CAS_ATTEMPTS || d.cancelled) throw this.#churn("create", w.key);
        expected = latest?.revision ?? 0;
      }
    });
  }

  update(w: ValidWrite, call: Call): Promise<void> {
    return this.#run("update", w.key, call, async (d) => {
      const data = ENCODER.encode(serializeValid(w.description, w.content));
      if (!this.#c.readBeforeUpdate) {
        // Like the file backend: replace, or create (which counts against capacity).
        const latest = await this.#get(w.key);
        if (!latest?.live) await this.#capacity.check(w.key, () => this.#count(d));
        const revision = await this.#put(w.key, data, undefined, d);
        this.#record(call, d, w.key, revision);
        return;
      }
      const seen = call.scope?.revision(this.#ns, w.key);
      if (seen === undefined || seen <= 0) {
        throw new StaleError(
          `${PREFIX} Cannot update memory ${
            quote(w.key)
          }: this run has not read it; read it first, then update`,
          { key: w.key },
        );
      }
      let revision: number;
      try {
        revision = await this.#put(w.key, data, seen, d);
      } catch (e) {
        if (apiCode(e) !== WRONG_LAST_SEQUENCE) throw e;
        throw new StaleError(
          `${PREFIX} Cannot update memory ${
            quote(w.key)
          }: it changed or was deleted since this run read it; read it again, then update`,
          { key: w.key },
        );
      }
      this.#record(call, d, w.key, revision);
    });
  }

  delete(key: string, call: Call): Promise<boolean> {
    // Whatever happens, the run loses its authority over the key.
    call.scope?.forget(this.#ns, key);
    return this.#run("delete", key, call, async (d) => {
      for (let attempt = 1;; attempt++) {
        const latest = await this.#get(key);
        if (!latest?.live) return false;
        // Only the deleter whose expected revision is still the latest writes the marker.
        try {
          await this.#c.kv.delete(this.#kvKey(key), { previousSeq: latest.revision });
          return true;
        } catch (e) {
          if (apiCode(e) !== WRONG_LAST_SEQUENCE) throw e;
        }
        if (attempt >= MAX_CAS_ATTEMPTS || d.cancelled) throw this.#churn("delete", key);
      }
    });
  }

  // Records a revision in the call's scope, unless the caller was already told the call failed:
  // a scope only learns what its run saw.
  #record(call: Call, d: Deadline, key: string, revision: number): void {
    if (!d.cancelled && !call.signal?.aborted) call.scope?.record(this.#ns, key, revision);
  }

  #kvKey(key: string): string {
    return this.#keyPrefix + key;
  }

  // The key's latest message, read from the stream leader so that it is never older than an
  // acknowledged write; `undefined` when the key never held anything.
  async #get(key: string): Promise<Latest | undefined> {
    const e = await this.#c.kv.get(this.#kvKey(key));
    if (e === null) return undefined;
    return { live: isLive(e.operation), revision: checkRevision(e.revision), value: e.value };
  }

  // Publishes an entry; with `expected`, only if the key's latest revision is `expected`
  // (0: the key holds nothing). Resolves to the new revision.
  async #put(
    key: string,
    data: Uint8Array,
    expected: number | undefined,
    d: Deadline,
  ): Promise<number> {
    const opts = expected === undefined
      ? { timeout: d.left() }
      : { previousSeq: expected, timeout: d.left() };
    return checkRevision(await this.#c.kv.put(this.#kvKey(key), data, opts));
  }

  // How many memories the keyspace holds, for the capacity check. The stream's per-subject
  // counts come in one request; they include delete markers, so only a count at the limit is
  // made exact by a headers-only scan.
  async #count(d: Deadline): Promise<number> {
    const info = await this.#c.jsm.streams.info(this.#c.stream, {
      subjects_filter: this.#filter,
    });
    const subjects = Object.keys(info.state.subjects ?? {}).length;
    if (subjects < MAX_ENTRIES) return subjects;
    return (await this.#scan(d, true)).size;
  }

  // The latest live message of every key under the prefix, in one pass over the stream: an
  // ephemeral consumer delivering the last message per subject, pulled in batches, deleted after.
  async #scan(d: Deadline, headersOnly = false): Promise<Map<string, Latest>> {
    const { js, jsm, stream, timeout } = this.#c;
    const ci: ConsumerInfo = await jsm.consumers.add(stream, {
      ack_policy: "none",
      deliver_policy: "last_per_subject",
      filter_subject: this.#filter,
      headers_only: headersOnly,
      mem_storage: true,
      num_replicas: 1,
      inactive_threshold: Math.max(MIN_CONSUMER_IDLE_MS, 2 * timeout) * 1e6,
    });
    const latest = new Map<string, Latest>();
    try {
      const consumer = js.consumers.getConsumerFromInfo(ci);
      let pending = ci.num_pending;
      while (pending > 0 && !d.cancelled) {
        const messages = await consumer.fetch({
          max_messages: Math.min(pending, SCAN_BATCH),
          expires: Math.max(1_000, d.left()),
        });
        d.onCancel(() => messages.stop());
        let received = 0;
        for await (const m of messages) {
          received++;
          pending = m.info.pending;
          const key = this.#keyOf(m.subject);
          if (key !== undefined) {
            const op = m.headers?.get("KV-Operation");
            const marker = m.headers?.has("Nats-Marker-Reason") ?? false;
            latest.set(key, {
              live: !marker && isLive(op === "" || op === undefined ? "PUT" : op),
              revision: m.seq,
              value: m.data,
            });
          }
          if (pending === 0) break;
        }
        // A pull that expires empty means the messages counted at the start are gone.
        if (received === 0) break;
      }
    } finally {
      // Best effort: a consumer whose delete is lost expires on the server by itself.
      await jsm.consumers.delete(stream, ci.name).catch(() => {});
    }
    for (const [key, entry] of latest) if (!entry.live) latest.delete(key);
    return latest;
  }

  // The memory key of a message subject; `undefined` for a name that is not a legal key
  // (planted by hand, say), which is invisible.
  #keyOf(subject: string): string | undefined {
    if (!subject.startsWith(this.#subjectPrefix)) return undefined;
    const key = subject.slice(this.#subjectPrefix.length);
    try {
      return validateKey(key);
    } catch {
      return undefined;
    }
  }

  #churn(op: "create" | "delete", key: string): UnavailableError {
    return new UnavailableError(
      `${PREFIX} Cannot ${op} memory ${
        quote(key)
      }: the key kept changing under concurrent writers; try again`,
      { key },
    );
  }

  // Runs one call under its deadline and signal; anything that is not a MemoryError becomes an
  // UnavailableError that names the kind of failure but never the server's address.
  async #run<T>(
    op: Op,
    key: string | undefined,
    call: Call,
    fn: (d: Deadline) => Promise<T>,
  ): Promise<T> {
    const d = new Deadline(this.#c.timeout);
    // Message parts, built only when a message is.
    const head = () =>
      `${PREFIX} Cannot ${op === "list" ? "list memories" : `${op} memory`}${
        key === undefined ? "" : ` ${quote(key)}`
      }`;
    const uncertain = op === "create" || op === "update" || op === "delete"
      ? "; the write may or may not have been applied"
      : "";
    try {
      return await withDeadline(fn(d), this.#c.timeout, call.signal, (why, cause) => {
        d.cancel();
        return why === "timeout"
          ? new UnavailableError(
            `${head()}: NATS did not answer within ${this.#c.timeout} ms${uncertain}`,
            { key },
          )
          : new UnavailableError(`${head()}: the call was aborted${uncertain}`, { key, cause });
      });
    } catch (e) {
      if (e instanceof MemoryError) throw e;
      throw new UnavailableError(`${head()}: ${reason(e, `${this.#c.timeout} ms`)}${uncertain}`, {
        key,
        cause: e,
      });
    } finally {
      d.cancel();
    }
  }
}

/**
 * Settles with `work`, or rejects with `fail(...)` when `ms` pass or `signal` aborts first. The
 * work keeps running in the background; its late failure is observed so it is never unhandled.
 */
function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  signal: AbortSignal | undefined,
  fail: (why: "timeout" | "abort", cause?: unknown) => Error,
): Promise<T> {
  work.catch(() => {});
  return new Promise<T>((resolve, reject) => {
    const settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      settle();
      reject(fail("abort", signal?.reason));
    };
    const timer = setTimeout(() => {
      settle();
      reject(fail("timeout"));
    }, ms);
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        settle();
        resolve(value);
      },
      (e) => {
        settle();
        reject(e);
      },
    );
  });
}

function exists(key: string): ExistsError {
  return new ExistsError(`${PREFIX} Cannot create memory ${quote(key)}: it already exists`, {
    key,
  });
}

function isLive(operation: string): boolean {
  return operation !== "DEL" && operation !== "PURGE";
}

function checkRevision(revision: number): number {
  if (!Number.isSafeInteger(revision) || revision <= 0) {
    throw new UnavailableError(
      `${PREFIX} The bucket reported revision ${revision}, which JavaScript cannot represent exactly (the stream is past sequence 2^53); move the memories to a new bucket`,
    );
  }
  return revision;
}

function apiCode(e: unknown): number | undefined {
  if (!(e instanceof Error)) return undefined;
  const code = (e as { code?: unknown }).code;
  return typeof code === "number" && e.name.endsWith("Error") ? code : undefined;
}

function errorName(e: unknown): string {
  return e instanceof Error ? e.name : typeof e;
}

// Why a NATS call failed, in words that carry no server address or credential. `within` is the
// call's timeout, which the client's own request timeout matches.
function reason(e: unknown, within: string): string {
  const code = apiCode(e);
  if (code === STREAM_NOT_FOUND) return "the bucket no longer exists";
  if (code === MESSAGE_TOO_LARGE) {
    return `the bucket refused the entry as too large; its max value size must be at least ${JETSTREAM_MIN_VALUE_SIZE} bytes`;
  }
  if (code !== undefined) return `JetStream refused the request (error ${code})`;
  switch (errorName(e)) {
    case "TimeoutError":
      return `NATS did not answer within ${within}`;
    case "JetStreamNotEnabled":
    case "NoResponders":
      return "no JetStream server answered";
    case "ClosedConnectionError":
      return "the NATS connection is closed";
    case "DrainingConnectionError":
      return "the NATS connection is draining";
    default:
      return `the NATS client failed (${errorName(e)})`;
  }
}
