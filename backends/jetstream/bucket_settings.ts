// What a memory bucket is made with, and the NATS CLI command that makes the same one. No NATS
// client import here: the CLI prints the command without loading the client.

/** The settings of a new memory bucket. */
export interface BucketSettings {
  /** The bucket's name. */
  readonly bucket: string;
  /** Replicas: 1 on a single server, 3 (or 5) on a cluster. */
  readonly replicas: number;
  /** Where the server keeps it: `"file"` survives a restart, `"memory"` does not. */
  readonly storage: "file" | "memory";
  /** The max value size in bytes (at least `JETSTREAM_MIN_VALUE_SIZE`). */
  readonly maxValueSize: number;
}

/**
 * The command that creates a bucket with what history needs, or adds it to an existing bucket
 * (keeping every memory): the bucket's stream with every message of a key kept, its history
 * stream, and the anchor.
 */
export function bucketInitCommand(
  bucket: string,
  s: Partial<Omit<BucketSettings, "bucket">> = {},
): string {
  return [
    `agentmem bucket init --bucket=${bucket}`,
    ...(s.replicas === undefined ? [] : [`--replicas=${s.replicas}`]),
    ...(s.storage === undefined ? [] : [`--storage=${s.storage}`]),
    ...(s.maxValueSize === undefined ? [] : [`--max-value-size=${s.maxValueSize}`]),
  ].join(" ");
}
