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

/** The NATS CLI command that creates the same bucket. */
export function natsKvAddCommand(s: BucketSettings): string {
  return `nats kv add ${s.bucket} --history=1 --storage=${s.storage} --replicas=${s.replicas} --max-value-size=${s.maxValueSize}`;
}
