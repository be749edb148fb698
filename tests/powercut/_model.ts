// What the power-cut run knows of each key: the state its last acknowledged write left, the write
// in flight at the cut (which may or may not have landed), and the states the key went through
// since the last cut, in order. From the workers' lines (see _worker.ts) and the run's own writes.

/** A key's state: the version it holds, or `null` when it holds nothing. */
export type KeyValue = number | null;

/** Which workload a key belongs to. */
export interface Group {
  /** A short name for reports and key names. */
  readonly name: string;
  readonly durable: boolean;
  readonly readBeforeUpdate: boolean;
}

/** One key of the run. */
export class KeyModel {
  readonly key: string;
  readonly group: Group;
  /** The state at the start of the round (acknowledged), then each acknowledged write's. */
  timeline: KeyValue[];
  /** The write in flight when the workers were killed, if any: the state it would leave. */
  pending: { value: KeyValue } | undefined;
  /** The next version to write (versions are never reused, landed or not). */
  next = 1;

  constructor(key: string, group: Group, value: KeyValue) {
    this.key = key;
    this.group = group;
    this.timeline = [value];
  }

  /** The state the last acknowledged write left. */
  get acked(): KeyValue {
    return this.timeline[this.timeline.length - 1] ?? null;
  }

  /** Starts a round from a state the run has just written (and synced). */
  reset(value: KeyValue): void {
    this.timeline = [value];
    this.pending = undefined;
  }
}

/** What a worker line says beyond the model: a failure, or a write that could not get through. */
export type LineNote = { error: string } | { blocked: string } | undefined;

/**
 * Applies one worker line to the model. An `E` line with a store error's code is a write that
 * could not get through (a lock or a damaged version left behind, say): its outcome stays open,
 * as for the write in flight. An `E` line of code `error` (no store error) fails the run.
 */
export function applyLine(keys: ReadonlyMap<string, KeyModel>, line: string): LineNote {
  const [tag, key, op, version] = line.split(" ", 4);
  if (tag === "R" || line === "") return undefined;
  if (tag === "E" && op !== "error:" && key !== "-") return { blocked: line.slice(2) };
  if (tag !== "A" && tag !== "B") return { error: `worker failed: ${line.slice(2)}` };
  const k = keys.get(key ?? "");
  if (k === undefined) return { error: `a worker named an unknown key: ${line}` };
  if (tag === "B") {
    const v = Number(version);
    k.pending = { value: op === "delete" ? null : v };
    if (op !== "delete") k.next = Math.max(k.next, v + 1);
    return undefined;
  }
  if (k.pending === undefined) return { error: `an acknowledgement without a write: ${line}` };
  k.timeline.push(k.pending.value);
  k.pending = undefined;
  return undefined;
}

/** What kind of write took a key from one state to the next. */
export type WriteKind = "create" | "update" | "delete";

/** How what a key holds after the cut compares with what was acknowledged. */
export interface Verdict {
  /** The kinds of the acknowledged writes that are lost, oldest first. */
  readonly lostKinds: readonly WriteKind[];
  /** Acknowledged writes whose effect is gone (0 when the key holds the last one, or the write in flight). */
  readonly lost: number;
  /** The key holds a state it never held at any acknowledged point nor by the write in flight. */
  readonly unknown: boolean;
}

/**
 * Compares a key's state after the cut with its round: the newest point of the timeline it
 * matches, or the write in flight; every acknowledged write after that point is lost.
 */
export function judge(k: KeyModel, found: KeyValue): Verdict {
  const t = k.timeline;
  const kinds = (from: number) =>
    t.slice(from).map((v, i): WriteKind => {
      const before = from + i === 0 ? null : t[from + i - 1];
      return v === null ? "delete" : before === null ? "create" : "update";
    });
  if (k.pending !== undefined && k.pending.value === found) {
    return { lost: 0, lostKinds: [], unknown: false };
  }
  for (let i = t.length - 1; i >= 0; i--) {
    if (t[i] === found) return { lost: t.length - 1 - i, lostKinds: kinds(i + 1), unknown: false };
  }
  // Not even the round's starting state (itself an acknowledged, synced write): all of it is gone.
  return { lost: t.length, lostKinds: kinds(0), unknown: true };
}
