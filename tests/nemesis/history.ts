// The recorded history of a nemesis run: one JSON object per line, written by every client process
// and by the controller, so that a failed run can be read and replayed.

/** Which workload an operation belongs to. */
export type Workload = "ctr" | "uniq" | "set";

/**
 * How a call ended: `ok`; `refused` (a typed, definite refusal such as `stale` or `exists`: the
 * write was not applied); `unavailable` (indeterminate: a write may or may not have been
 * applied); `untyped` (an error that is not a MemoryError); `hung` (no answer by the deadline
 * plus the margin).
 */
export type Outcome = "ok" | "refused" | "unavailable" | "untyped" | "hung";

/** One store call made by a client process. */
export interface OpRecord {
  readonly t: "op";
  /** The client process. */
  readonly p: number;
  /** The node the client is connected to (0-based). */
  readonly node: number;
  readonly wl: Workload;
  readonly f: "read" | "create" | "update" | "delete";
  /** The store's prefix (the keyspace). */
  readonly ns: string;
  readonly key: string;
  /** The unique id this write adds (counter increments, creates). */
  readonly v?: string;
  /** Milliseconds since the epoch when the call was made and when it ended. */
  readonly invoke: number;
  readonly complete?: number;
  readonly outcome: Outcome;
  /** The MemoryError code, or the error's name when untyped. */
  readonly code?: string;
  /** A counter read's number of ids; a delete's answer. */
  readonly r?: number | boolean;
}

/** A fault the nemesis started or healed. */
export interface NemesisRecord {
  readonly t: "nemesis";
  readonly f: "start" | "heal";
  readonly fault: string;
  readonly detail?: string;
  readonly time: number;
}

/** A key's value at the end of the run, read after healing; `null` when absent. */
export interface FinalRecord {
  readonly t: "final";
  readonly ns: string;
  readonly key: string;
  readonly value: string | null;
}

/**
 * A key's kept versions at the end of the run (history on): each one's revision, what it did and
 * the write id its call carried (`callId`).
 */
export interface VersionsRecord {
  readonly t: "versions";
  readonly ns: string;
  readonly key: string;
  readonly versions: readonly { readonly rev: string; readonly op: string; readonly id?: string }[];
}

/** Any line of the history. */
export type HistoryRecord = OpRecord | NemesisRecord | FinalRecord | VersionsRecord;

/** Appends records to a JSON-lines file, buffering and flushing every `flushEvery` records. */
export class HistoryWriter {
  readonly #file: Deno.FsFile;
  readonly #lines: string[] = [];
  readonly #flushEvery: number;

  /** @param path The file, created or appended to. @param flushEvery Records per write. */
  constructor(path: string, flushEvery = 50) {
    this.#file = Deno.openSync(path, { create: true, append: true });
    this.#flushEvery = flushEvery;
  }

  /** Adds one record. */
  add(record: HistoryRecord): void {
    this.#lines.push(JSON.stringify(record));
    if (this.#lines.length >= this.#flushEvery) this.flush();
  }

  /** Writes what is buffered. */
  flush(): void {
    if (this.#lines.length === 0) return;
    const data = new TextEncoder().encode(this.#lines.splice(0).join("\n") + "\n");
    let off = 0;
    while (off < data.length) off += this.#file.writeSync(data.subarray(off));
  }

  /** Flushes and closes the file. */
  close(): void {
    this.flush();
    this.#file.close();
  }
}

/**
 * Reads every record of the JSON-lines files `paths`, a line at a time (a history can be large);
 * a torn last line is skipped.
 */
export async function readHistory(paths: readonly string[]): Promise<HistoryRecord[]> {
  const records: HistoryRecord[] = [];
  for (const path of paths) {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path);
    } catch {
      continue;
    }
    let rest = "";
    const take = (line: string) => {
      if (line.trim() === "") return;
      try {
        records.push(compact(JSON.parse(line) as HistoryRecord));
      } catch {
        // a line cut short by a killed process
      }
    };
    for await (const chunk of file.readable.pipeThrough(new TextDecoderStream())) {
      const lines = (rest + chunk).split("\n");
      rest = lines.pop() ?? "";
      lines.forEach(take);
    }
    take(rest);
  }
  return records;
}

// Early histories kept a counter read's whole list of ids; only its length is needed.
function compact(r: HistoryRecord): HistoryRecord {
  const read = r as { r?: unknown };
  return Array.isArray(read.r) ? { ...r, r: read.r.length } as HistoryRecord : r;
}
