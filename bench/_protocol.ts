// The line protocol between the benchmark driver (bench/main.ts) and its worker processes
// (bench/worker.ts): one JSON object per line, driver → worker on stdin, replies on stdout.

/** The backends the benchmark measures. */
export type Backend = "file" | "jetstream";
/** What a worker runs its operations against: the library, or the floor (`-raw`). */
export type TargetName = Backend | `${Backend}-raw`;
/** The timed operations of a run. `counter` is a read→update increment with retry. */
export type Op = "create" | "update" | "read" | "delete" | "counter";
/** The listing strategies compared in the list benchmark (bench/_list.ts). */
export type ListMethod =
  | Backend
  | `file-${"headers" | "bodies"}`
  | `jetstream-${"watch" | "keys-get"}`;

/** Where a run's data lives: a directory, a bucket, or (for a peer) both. */
export type Location = { readonly dir?: string; readonly bucket?: string };

/**
 * Every command a worker accepts; `init` first. A phase's create and delete visit each key once,
 * in order; update, read and counter make `count` operations on keys picked at random.
 */
export type Command =
  | {
    cmd: "init";
    index: number;
    servers: readonly string[];
    valueSize: number;
    warmupOps: number;
    warmup: Location;
  }
  | { cmd: "open"; target: TargetName; location: Location }
  | { cmd: "phase"; op: Op; keys: readonly string[]; count: number; seed: number }
  | { cmd: "list"; method: ListMethod; location: Location; expect: number }
  | { cmd: "peer-open"; system: string; location: Location }
  | { cmd: "peer-run"; op: string; keys: readonly string[]; reps: number }
  | { cmd: "peer-close" | "exit" };

/** A worker's reply to one command. */
export type Reply = { ok: true; result?: unknown } | { ok: false; error: string };
