// What a worker measures: the library's store or a baseline, behind one small interface, and
// the entries every target writes (the same bytes, so only the code path differs).

import { serializeEntry } from "../mod.ts";
import type { SnapshotResult, TargetName } from "./_protocol.ts";

/** Conflict counters one phase accumulates. */
export interface Conflicts {
  exists: number;
  stale: number;
  retries: number;
}

/** One operation path under test. */
export interface Target {
  readonly name: TargetName;
  /** Creates `key`; `false` when it already existed. */
  create(key: string): Promise<boolean>;
  /** Replaces what `key` holds, re-reading and retrying on a stale revision. */
  update(key: string, c: Conflicts): Promise<void>;
  /** Reads `key`; `false` when what came back is not an entry a writer wrote. */
  read(key: string): Promise<boolean>;
  /** Deletes `key`; `true` when it existed. */
  delete(key: string): Promise<boolean>;
  /** Adds one to the counter held under `key` (read, then a revision-checked update). */
  increment(key: string, c: Conflicts): Promise<void>;
  /** Untimed: writes `keys` with `content` (or the standard body), bypassing validation. */
  seed(keys: readonly string[], content: string | undefined, valueSize: number): Promise<void>;
  /** Untimed: every key, and the bodies of `bodiesOf`. */
  snapshot(bodiesOf: readonly string[]): Promise<SnapshotResult>;
  /** Releases what `open` acquired (never the shared NATS connection). */
  close(): Promise<void>;
}

const ENCODER = new TextEncoder();

/** The description every benchmark entry carries. */
export const DESCRIPTION = "Benchmark entry: a note one worker wrote for another to read";

/** The entries a worker writes: bodies for create and update, and their serialized bytes. */
export class Entries {
  readonly valueSize: number;
  readonly createContent: string;
  readonly updateContent: string;
  readonly createBytes: Uint8Array;
  readonly updateBytes: Uint8Array;
  /** The serialized header alone; a raw baseline's counter body starts after it. */
  readonly headerBytes: number;

  constructor(valueSize: number) {
    this.valueSize = valueSize;
    this.createContent = "c".repeat(valueSize);
    this.updateContent = "u".repeat(valueSize);
    this.createBytes = ENCODER.encode(serializeEntry(DESCRIPTION, this.createContent));
    this.updateBytes = ENCODER.encode(serializeEntry(DESCRIPTION, this.updateContent));
    this.headerBytes = ENCODER.encode(serializeEntry(DESCRIPTION, "")).length;
  }

  /** The serialized entry holding `content`. */
  bytesOf(content: string): Uint8Array {
    return ENCODER.encode(serializeEntry(DESCRIPTION, content));
  }

  /** Whether a body read through the library is one a writer wrote, whole. */
  isWrittenContent(content: string): boolean {
    const n = this.valueSize;
    if (content.length !== n) return false;
    if (n === 0) return true;
    const first = content[0];
    return (first === "c" || first === "u") && content[n - 1] === first;
  }

  /** Whether raw bytes are one whole serialized entry a writer wrote. */
  isWrittenBytes(bytes: Uint8Array): boolean {
    const n = this.createBytes.length;
    if (bytes.length !== n) return false;
    if (this.valueSize === 0) return true;
    const first = bytes[this.headerBytes];
    return (first === 0x63 || first === 0x75) && bytes[n - 1] === first;
  }
}
