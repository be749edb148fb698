// The line protocol between the benchmark driver (bench/main.ts) and its worker processes
// (bench/worker.ts): one JSON object per line, driver → worker on stdin, replies on stdout.

/** The backends the benchmark measures. */
export type Backend = "file" | "jetstream";

/** What a worker runs its operations against: the library or one of the baselines. */
export type TargetName =
  | "file"
  | "file-raw"
  | "jetstream"
  | "jetstream-raw";

/** What the driver needs to know about a target before it runs one. */
export interface TargetTraits {
  readonly backend: Backend;
  /** Whether this is the library (the others are baselines). */
  readonly library: boolean;
  /** Whether it runs the read→update counter without losing increments (a revision check). */
  readonly counter: boolean;
}

/** Every target's traits. */
export const TRAITS: Readonly<Record<TargetName, TargetTraits>> = {
  "file": {
    backend: "file",
    library: true,
    counter: false,
  },
  "file-raw": {
    backend: "file",
    library: false,
    counter: false,
  },
  "jetstream": {
    backend: "jetstream",
    library: true,
    counter: true,
  },
  "jetstream-raw": {
    backend: "jetstream",
    library: false,
    counter: true,
  },
};

/** The timed operations of a run. `counter` is a read→update increment with retry. */
export type Op = "create" | "update" | "read" | "delete" | "counter";

/** The listing strategies compared in the list benchmark. */
export type ListMethod =
  | "file"
  | "file-headers"
  | "file-bodies"
  | "jetstream"
  | "jetstream-watch"
  | "jetstream-keys-get";

/** Where a run's data lives: a directory or a bucket. */
export interface Location {
  readonly dir?: string;
  readonly bucket?: string;
}

/** The first line a worker receives. */
export interface InitCommand {
  readonly cmd: "init";
  readonly index: number;
  /** NATS server URLs; empty when no jetstream target runs. */
  readonly servers: readonly string[];
  readonly valueSize: number;
  /** Operations of each kind a worker runs once per target before its first measured run. */
  readonly warmupOps: number;
  /** A directory and a bucket the worker may use for warm-up. */
  readonly warmup: { readonly dir: string; readonly bucket: string | undefined };
}

/** Binds the worker to a target over a fresh location. */
export interface OpenCommand {
  readonly cmd: "open";
  readonly target: TargetName;
  readonly location: Location;
}

/** Runs one timed phase. */
export interface PhaseCommand {
  readonly cmd: "phase";
  readonly op: Op;
  /** The keys this worker works on; create and delete visit each once, in order. */
  readonly keys: readonly string[];
  /** Operations for update, read and counter (keys picked at random from `keys`). */
  readonly count: number;
  readonly seed: number;
}

/** Untimed set-up and checks on the open target. */
export interface SetupCommand {
  readonly cmd: "seed" | "snapshot";
  /** seed: keys to write (untimed); snapshot: ignored. */
  readonly keys: readonly string[];
  /** seed: value size of the entries written; default the run's value size. */
  readonly valueSize?: number;
  /** seed: content of every entry (the counter's start value, say). */
  readonly content?: string;
}

/** Lists the open location once with one strategy and reports time and bytes read. */
export interface ListCommand {
  readonly cmd: "list";
  readonly method: ListMethod;
  readonly location: Location;
  readonly expect: number;
}

/** Ends the worker. */
export interface ExitCommand {
  readonly cmd: "exit";
}

/** Every command a worker accepts. */
export type Command =
  | InitCommand
  | OpenCommand
  | PhaseCommand
  | SetupCommand
  | ListCommand
  | ExitCommand;

/** What one worker measured in one phase. */
export interface PhaseResult {
  readonly op: Op;
  /** Epoch milliseconds (sub-millisecond precision) when the worker started and finished. */
  readonly start: number;
  readonly end: number;
  /** Latency of every completed operation, microseconds, retries included. */
  readonly latencies: number[];
  /** Creates refused because the key existed. */
  readonly exists: number;
  /** Updates refused as stale (revision moved on, or never read). */
  readonly stale: number;
  /** Extra attempts after a conflict (a re-read and another update). */
  readonly retries: number;
  /** Keys this worker created (create) or deleted (delete returned true). */
  readonly won: string[];
  /** Reads whose entry was not one a writer wrote (torn or wrong length). */
  readonly badReads: number;
}

/** A snapshot of the open location: every key and, for a counter, its value. */
export interface SnapshotResult {
  readonly keys: string[];
  readonly values: Record<string, string>;
}

/** One timed listing. */
export interface ListResult {
  readonly method: ListMethod;
  readonly ms: number;
  /** Bytes the process read from files during the listing (`/proc/self/io` rchar); -1 if unknown. */
  readonly bytesRead: number;
  readonly entries: number;
}

/** A worker's reply to one command. */
export type Reply =
  | { readonly ok: true; readonly result?: unknown }
  | { readonly ok: false; readonly error: string };
