// Durable file writes with many calls in flight through one handle (one process serving many
// runs): throughput of creates and updates for the library, today's reference library (the
// commit in reference.json, extracted with `git archive`) and the raw group-commit floor.

import type { Store } from "../mod.ts";
import { DirSync, inFlight, rawCreate, rawUpdate } from "./_raw.ts";

/** Opens a durable file store over a directory. */
export type OpenFile = (dir: string) => Promise<Store>;

/** Ops/s of creates then updates of `n` keys, `width` in flight. */
export interface InflightResult {
  create: number;
  update: number;
  /** Directory fsyncs per create (raw floor only). */
  dirSyncsPerCreate?: number;
}

const DESCRIPTION = "Benchmark entry: a note one worker wrote for another to read";

/** Measures the library behind `open` in a fresh directory under `work`. */
export async function inflightLibrary(
  open: OpenFile,
  work: string,
  n: number,
  width: number,
  valueSize: number,
): Promise<InflightResult> {
  const dir = await Deno.makeTempDir({ dir: work, prefix: "inflight-" });
  try {
    const store = await open(dir);
    const keys = Array.from({ length: n }, (_, i) => `k${i}`);
    const c = "c".repeat(valueSize);
    const u = "u".repeat(valueSize);
    const tc = await inFlight(keys, width, (k) => store.create(k, DESCRIPTION, c));
    const tu = await inFlight(keys, width, (k) => store.update(k, DESCRIPTION, u));
    return { create: (n * 1000) / tc, update: (n * 1000) / tu };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Measures the raw group-commit floor (one file fsync per write, shared directory fsyncs). */
export async function inflightRaw(
  work: string,
  n: number,
  width: number,
  bytes: { create: Uint8Array; update: Uint8Array },
): Promise<InflightResult> {
  const dir = await Deno.makeTempDir({ dir: work, prefix: "inflight-raw-" });
  try {
    const sync = new DirSync(dir);
    const keys = Array.from({ length: n }, (_, i) => `k${i}`);
    const tc = await inFlight(keys, width, (k) => rawCreate(dir, sync, k, bytes.create));
    const perCreate = sync.count / n;
    const tu = await inFlight(keys, width, (k) => rawUpdate(dir, sync, k, bytes.update));
    return { create: (n * 1000) / tc, update: (n * 1000) / tu, dirSyncsPerCreate: perCreate };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
