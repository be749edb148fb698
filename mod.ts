/**
 * agentmem: a durable memory for LLM agent harnesses. The model writes a note under a key and
 * reads it back on a later run; the harness stores it and never treats it as an instruction. Two
 * backends ship: **file** (a directory, no server) and **jetstream** (a NATS JetStream KV bucket).
 * This module re-exports the faces: `store/mod.ts` (the contract, errors, Scope, history), the
 * backends' openers, and `tools/mod.ts` (the model-facing tools and their adapters).
 *
 * @example Remember something across runs
 * ```ts
 * import { ExistsError, openFileStore } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const store = await openFileStore({ dir });
 * await store.create("user.name", "What the user wants to be called", "Sam");
 * await assert.rejects(store.create("user.name", "again", "Samuel"), ExistsError);
 * assert.deepEqual(await store.list(), [
 *   { key: "user.name", description: "What the user wants to be called" },
 * ]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */

export * from "./store/mod.ts";
export * from "./backends/file.ts";
export * from "./backends/jetstream.ts";
export * from "./tools/mod.ts";
