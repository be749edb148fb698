// Redaction and purge reach the hybrid search's sidecar, on every backend that keeps history (part
// of the one conformance suite): the key's vectors (and the hash of its text) leave the raw
// storage at once, also when a search embedding at that moment writes them after the purge;
// another key's stay, check is not confused by the sidecar, and the search still ranks by meaning.
// The markers are the exact bytes the search keeps: the SHA-256 of the model and the text, and
// the unit vector as little-endian float32 (a vector, like the text, says what the memory held).

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  auditStore,
  history,
  memoryTools,
  purgeKey,
  redactVersion,
  runTool,
  Scope,
  type Store,
} from "../mod.ts";
import type { Fixture } from "./_lib/fixture.ts";

type Register = (name: string, fn: (f: Fixture) => Promise<void>) => void;

const MODEL = "marker-model";
const DIM = 16;

// A vector of `text`, from its SHA-256: any two texts differ.
function vectorOf(text: string): number[] {
  const digest = createHash("sha256").update(text).digest();
  return Array.from({ length: DIM }, (_, i) => 0.01 + digest[i]! / 255);
}

// The bytes the search keeps of a memory: its hash, and its vector as the cache stores it.
function markersOf(key: string, entry: { description: string; content: string }): Uint8Array[] {
  const text = `${key}\n${entry.description}\n\n${entry.content}`;
  const hash = createHash("sha256").update(MODEL).update("\n").update(text).digest();
  const v = vectorOf(text);
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  const unit = Float32Array.from(v, (x) => x / norm);
  const bytes = new Uint8Array(unit.length * 4);
  const view = new DataView(bytes.buffer);
  unit.forEach((x, i) => view.setFloat32(i * 4, x, true));
  return [new Uint8Array(hash), bytes];
}

// An embedder whose document calls wait for `gate` when one is set.
function embedder() {
  const o = {
    gate: undefined as Promise<void> | undefined,
    waiting: undefined as (() => void) | undefined,
    embed: async (texts: string[], call: { kind: string }) => {
      if (call.kind === "document" && o.gate !== undefined) {
        o.waiting?.();
        await o.gate;
      }
      return texts.map(vectorOf);
    },
  };
  return o;
}

async function hitsOf(f: Fixture, markers: Uint8Array[]): Promise<string[]> {
  return (await Promise.all(markers.map((m) => f.rawHits!(m)))).flat();
}

async function search(store: Store, e: ReturnType<typeof embedder>, query: string) {
  const tools = memoryTools(store, { search: { embed: e.embed, model: MODEL } });
  const result = await runTool(tools, "memory_search", { query });
  assert.equal(result.isError, false, result.content);
  assert.doesNotMatch(result.content, /ranked by words only/);
  return result.content;
}

/** Registers the sidecar cases of redaction and purge. */
export function redactSidecarConformance(test: Register): void {
  test("purge and redact: the search's vectors of the key leave the sidecar at once; another key's stay", async (f) => {
    const { store } = f;
    const e = embedder();
    const pii = { description: "Personal", content: "address 12 Elm Street" };
    const db1 = { description: "Database", content: "password hunter2" };
    const kept = { description: "Another memory", content: "stays" };
    await store.create("pii", pii.description, pii.content);
    await store.create("db", db1.description, db1.content);
    await store.create("kept", kept.description, kept.content);
    await search(store, e, "address");
    for (const [key, entry] of [["pii", pii], ["db", db1], ["kept", kept]] as const) {
      assert.ok((await hitsOf(f, markersOf(key, entry))).length >= 2, `${key}'s vector is kept`);
    }
    // No search since the update: the sidecar still holds the old text's vector, until the
    // redaction of that version drops it.
    const scope = new Scope();
    await store.read("db", { scope });
    await store.update("db", "Database", "password: in the vault", { scope });
    const leaked = (await history(store, "db")).at(-1)!;
    await redactVersion(store, "db", leaked.revision, { reason: "a password" });
    assert.deepEqual(await hitsOf(f, markersOf("db", db1)), []);
    await purgeKey(store, "pii", { reason: "erasure request" });
    assert.deepEqual(await hitsOf(f, markersOf("pii", pii)), []);
    assert.equal((await hitsOf(f, markersOf("kept", kept))).length, 2, "another key's stay");
    const audit = await auditStore(store);
    assert.deepEqual([audit.history ?? [], audit.ignored], [[], []], JSON.stringify(audit));
    assert.deepEqual(audit.entries.map((a) => [a.name, a.problem]), [
      ["db", undefined],
      ["kept", undefined],
    ]);
    assert.match(await search(store, e, "vault"), /db/);
  });

  test("purge: a search embedding while the purge runs does not leave the purged text's vector behind", async (f) => {
    const { store } = f;
    const e = embedder();
    const pii = { description: "Personal", content: "phone 555 0100" };
    await store.create("kept", "Another memory", "stays");
    await search(store, e, "memory");
    await store.create("pii", pii.description, pii.content);
    // The search lists "pii" and embeds it; the purge runs and finishes while it waits.
    let release!: () => void;
    e.gate = new Promise<void>((r) => release = r);
    const embedding = new Promise<void>((r) => e.waiting = r);
    const searching = search(store, e, "phone");
    await embedding;
    await purgeKey(store, "pii", { reason: "erasure request" });
    release();
    await searching;
    assert.deepEqual(await hitsOf(f, markersOf("pii", pii)), []);
  });
}
