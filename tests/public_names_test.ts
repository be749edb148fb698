// DESIGN.md's public names (its "Public names (exported from mod.ts)" section) are exported from
// mod.ts, the root face that re-exports store/mod.ts, tools/mod.ts and the backends' openers:
// types by this file type-checking, values at run time. Every name DESIGN.md fixes has landed;
// the gate's options (review, budget, protect) are checked here by use, through mod.ts alone.

import assert from "node:assert/strict";
import * as mod from "../mod.ts";
import type {
  CallOptions,
  Entry,
  ExposeSpec,
  Info,
  Item,
  Proposal,
  Store,
  Tool,
  Version,
} from "../mod.ts";

// The types: a name missing from mod.ts fails `deno check` of this file, and so this test.
export type DesignTypes = [
  CallOptions,
  Entry,
  ExposeSpec,
  Info,
  Item,
  Proposal,
  Store,
  Tool,
  Version,
];

/** The values DESIGN.md names, by its groups. */
const DESIGN_VALUES = {
  limits: [
    "MAX_KEY_RUNES",
    "MAX_DESCRIPTION_RUNES",
    "MAX_CONTENT_BYTES",
    "MAX_ENTRIES",
    "MAX_ENTRY_BYTES",
  ],
  errors: [
    "MemoryError",
    "InvalidKeyError",
    "InvalidDescriptionError",
    "TooLargeError",
    "CapacityError",
    "ExistsError",
    "StaleError",
    "NotFoundError",
    "ConfigError",
    "UnavailableError",
    "BudgetError",
  ],
  validation: ["validateKey", "validateWrite", "serializeEntry", "parseEntry"],
  scope: ["Scope", "latestScope"],
  backends: [
    "openFileStore",
    "openJetStreamStore",
    "registerBackend",
    "openStore",
    "decodeOptions",
  ],
  tools: [
    "memoryTools",
    "memorySystemNote",
    "defineTool",
    "runTool",
    "toAnthropicTools",
    "toAnthropicRunnableTools",
    "anthropicMemoryHandlers",
    "toOpenAITools",
    "toAISDKTools",
  ],
  history: ["history", "readVersion", "restoreVersion", "auditLog", "revertRun"],
  trust: ["saveAnchor", "checkAnchor"],
  gate: ["proposals", "approveProposal", "rejectProposal", "redactVersion", "purgeKey"],
} as const;

// The gate's options, by their types: a missing or renamed option fails `deno check`.
export type DesignOptions = [
  Parameters<typeof mod.openFileStore>[0]["review"],
  Parameters<typeof mod.openJetStreamStore>[0]["review"],
  NonNullable<ConstructorParameters<typeof mod.Scope>[0]>["budget"],
  NonNullable<Parameters<typeof mod.memoryTools>[1]>["protect"],
  Parameters<typeof mod.anthropicMemoryHandlers>[1]["protect"],
];

Deno.test("mod.ts exports every public name DESIGN.md fixes", () => {
  const exported = new Set(Object.keys(mod));
  const missing = Object.values(DESIGN_VALUES).flat().filter((name) => !exported.has(name));
  assert.deepEqual(missing, []);
});

Deno.test("mod.ts: the gate's names work together as DESIGN.md gives them", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const store = await mod.openFileStore({ dir, review: "tainted" });
    await store.create("policy.refunds", "Refund policy", "30 days");
    await store.update("policy.refunds", "Refund policy", "45 days");
    const older = (await mod.history(store, "policy.refunds")).at(-1);
    // A tainted run's write is held as a proposal, and rejected.
    const tainted = new mod.Scope({ run: "run-t", tainted: true });
    await store.create("note", "Planted", "held", { scope: tainted });
    const [held] = await mod.proposals(store);
    assert.equal(held?.key, "note");
    await mod.rejectProposal(store, held!.id, { reason: "planted" });
    // A budget of one write stops the second; a protected key refuses the model's write.
    const scope = new mod.Scope({ run: "run-b", budget: { writes: 1 } });
    await store.create("a", "A", "a", { scope });
    await assert.rejects(store.create("b", "B", "b", { scope }), mod.BudgetError);
    const tools = mod.memoryTools(store, { protect: ["policy."] });
    const args = { key: "policy.refunds", description: "d", content: "x", overwrite: true };
    assert.equal((await mod.runTool(tools, "memory_write", args)).isError, true);
    // Redaction and purge.
    await mod.redactVersion(store, "policy.refunds", older!.revision, { reason: "wrong" });
    await mod.purgeKey(store, "a", { reason: "test" });
    await assert.rejects(store.read("a"), mod.NotFoundError);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mod.ts: Scope has DESIGN's members, and every error class is a MemoryError", () => {
  const scope = new mod.Scope({ run: "run-1", actor: "agent:travel" });
  assert.deepEqual([scope.run, scope.actor, scope.tainted], ["run-1", "agent:travel", false]);
  scope.taint();
  assert.equal(mod.Scope.restore(scope.snapshot()).tainted, true);
  for (const name of DESIGN_VALUES.errors) {
    const E = mod[name] as unknown as { prototype: object };
    assert.ok(E === mod.MemoryError || E.prototype instanceof mod.MemoryError, name);
  }
  assert.equal(new mod.NotFoundError("gone").code, "not_found");
});
