// `bucket init`: create a jetstream bucket the backend accepts, then open it with the backend to
// prove it, and print the equivalent `nats kv add` command. An existing bucket is only checked.

import type { NatsConnection } from "@nats-io/nats-core";
import {
  createJetStreamBucket,
  JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  jetStreamBucketCommand,
  type JetStreamBucketSettings as BucketSettings,
  openJetStreamStore,
} from "../mod.ts";
import { type TextOptions, UsageError } from "./_args.ts";
import { out, safeJson } from "./_output.ts";
import type { Command } from "./_spec.ts";

const BUCKET_NAME = /^[A-Za-z0-9_-]+$/;

export const bucketInitCommand: Command = {
  name: "bucket init",
  summary:
    "create a jetstream KV bucket that the backend accepts, with what history needs; an existing bucket gets what it lacks",
  about:
    "Its stream keeps every version until it is moved to the history stream KVH_<bucket>. An existing bucket keeps every memory. The bucket is then opened with the backend, to prove it passes the backend's checks.",
  options: {
    bucket: { kind: "string", value: "<name>", help: 'the bucket\'s name (default "agentmem")' },
    replicas: {
      kind: "string",
      value: "<n>",
      help: "replicas, 1 to 5 (default 1; 3 on a cluster)",
    },
    storage: {
      kind: "string",
      value: "<kind>",
      help: "file (default) or memory (lost when the server restarts)",
    },
    "max-value-size": {
      kind: "string",
      value: "<n>",
      help: "bytes (default and minimum: the largest entry plus the headers of a write)",
    },
    "dry-run": { kind: "boolean", help: "print the command that makes it, connect nowhere" },
  },
  reach: "nats",
  writes: "unless-dry-run",
  examples: ["agentmem bucket init --servers nats://127.0.0.1:4222 --bucket agentmem"],
  alias: ["create", "add", "new", "make", "setup", "upgrade"],
  run: async (ctx) => {
    const o = {
      bucket: ctx.str("bucket"),
      replicas: ctx.str("replicas"),
      storage: ctx.str("storage"),
      maxValueSize: ctx.str("max-value-size"),
      dryRun: ctx.flag("dry-run"),
      json: ctx.json,
    };
    const settings = bucketSettings(o);
    return await bucketInit(o.dryRun ? undefined : await ctx.nats(), { ...o, settings });
  },
};

/** The option values `bucket init` reads. */
interface BucketOptions extends TextOptions<"bucket" | "replicas" | "storage" | "maxValueSize"> {
  readonly dryRun: boolean;
  readonly json: boolean;
}

/**
 * The settings the options ask for.
 *
 * @throws {UsageError} on a bad name, replica count, storage kind or size.
 */
function bucketSettings(o: BucketOptions): BucketSettings {
  const bucket = o.bucket ?? "agentmem";
  if (!BUCKET_NAME.test(bucket)) {
    throw new UsageError('--bucket must be letters, digits, "_" and "-"');
  }
  const replicas = integer(o.replicas ?? "1", "--replicas");
  if (replicas < 1 || replicas > 5) throw new UsageError("--replicas must be 1 to 5");
  const storage = o.storage ?? "file";
  if (storage !== "file" && storage !== "memory") {
    throw new UsageError('--storage must be "file" or "memory"');
  }
  const maxValueSize = integer(
    o.maxValueSize ?? String(JETSTREAM_HISTORY_MIN_VALUE_SIZE),
    "--max-value-size",
  );
  if (maxValueSize < JETSTREAM_HISTORY_MIN_VALUE_SIZE) {
    throw new UsageError(
      `--max-value-size must be at least ${JETSTREAM_HISTORY_MIN_VALUE_SIZE} bytes (the largest entry plus the headers of a write and of its version)`,
    );
  }
  return { bucket, replicas, storage, maxValueSize };
}

/** Runs `bucket init` on a connection (`undefined` with `--dry-run`, which connects nowhere). */
async function bucketInit(
  nc: NatsConnection | undefined,
  o: BucketOptions & { readonly settings: BucketSettings },
): Promise<number> {
  const s = o.settings;
  const command = jetStreamBucketCommand(s);
  if (nc === undefined) {
    out(o.json ? safeJson({ bucket: s.bucket, result: "dry_run", command }) : command);
    return 0;
  }
  const result = await createJetStreamBucket(nc, s);
  // The backend's own checks decide whether the bucket is usable (it throws ConfigError if not).
  await openJetStreamStore({ bucket: s.bucket, prefix: "" }, { nc });
  if (o.json) out(safeJson({ bucket: s.bucket, result, command }));
  else {
    out(
      result === "created"
        ? `created bucket ${s.bucket} with history (streams KV_${s.bucket} and KVH_${s.bucket}); to make the same again:\n${command}`
        : result === "upgraded"
        ? `bucket ${s.bucket} now has what history needs (every memory kept; versions move to stream KVH_${s.bucket}) and passes the backend's checks`
        : `bucket ${s.bucket} exists with history and passes the backend's checks (left unchanged); a new one would be:\n${command}`,
    );
    if (s.storage === "memory") {
      out("note: memory storage loses every memory when the server restarts");
    }
  }
  return 0;
}

function integer(text: string, option: string): number {
  if (!/^[0-9]+$/.test(text)) throw new UsageError(`${option} must be a whole number`);
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new UsageError(`${option} is too large`);
  return n;
}
