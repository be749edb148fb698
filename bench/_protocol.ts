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
  | "file-headers"
  | "file-bodies"
  | "jetstream-watch"
  | "jetstream-keys-get";

/** Where a run's data lives: a directory, a bucket, or (for a peer) both. */
export interface Location {
  readonly dir?: string;
  readonly bucket?: string;
}

/**
 * Every command a worker accepts; `init` first. A phase's create and delete visit each key once,
 * in order; update, read and counter make `count` operations on keys picked at random.
 */
export type Command =
  | {
    readonly cmd: "init";
    readonly index: number;
    readonly servers: readonly string[];
    readonly valueSize: number;
    readonly warmupOps: number;
    readonly warmup: Location;
  }
  | { readonly cmd: "open"; readonly target: TargetName; readonly location: Location }
  | {
    readonly cmd: "phase";
    readonly op: Op;
    readonly keys: readonly string[];
    readonly count: number;
    readonly seed: number;
  }
  | {
    readonly cmd: "list";
    readonly method: ListMethod;
    readonly location: Location;
    readonly expect: number;
  }
  | { readonly cmd: "peer-open"; readonly system: string; readonly location: Location }
  | {
    readonly cmd: "peer-run";
    readonly op: string;
    readonly keys: readonly string[];
    readonly reps: number;
  }
  | { readonly cmd: "peer-close" | "exit" };

/** A worker's reply to one command. */
export type Reply = { readonly ok: true; readonly result?: unknown } | {
  readonly ok: false;
  readonly error: string;
};
