// The review queue's limit through two handles of one file store: a handle's kept count of
// pending proposals (backends/file/pending_count.ts) must see what another handle added since,
// and take the count again once it says "full".

import assert from "node:assert/strict";
import {
  CapacityError,
  MAX_PENDING_PROPOSALS,
  openFileStore,
  proposals,
  rejectProposal,
  Scope,
} from "../../mod.ts";
import { tempDir } from "../_lib/temp_dir.ts";

Deno.test("review queue: a held write sees proposals another handle added since its last count, and a decision made elsewhere frees a place", async () => {
  await using tmp = await tempDir();
  const dir = `${tmp.path}/store`;
  const a = await openFileStore({ dir, review: "all", durable: false });
  const b = await openFileStore({ dir, review: "all", durable: false });
  const run = new Scope({ run: "run-queue" });
  const hold = (store: typeof a, key: string) => store.create(key, "held", "", { scope: run });
  for (let i = 0; i < MAX_PENDING_PROPOSALS - 1; i++) await hold(a, `a${i}`);
  // One place left, which the other handle takes.
  await hold(b, "b0");
  await assert.rejects(hold(a, "a-over"), (e: Error) => {
    assert.ok(e instanceof CapacityError, String(e));
    assert.match(e.message, /the review queue is full \(1024 proposals pending\)/);
    return true;
  });
  assert.equal((await proposals(a)).length, MAX_PENDING_PROPOSALS);
  // The other handle decides one: the first, whose count said "full", counts again.
  const [first] = await proposals(b, { limit: 1 });
  await rejectProposal(b, first!.id);
  await hold(a, "a-after");
  const pending = await proposals(a);
  assert.equal(pending.length, MAX_PENDING_PROPOSALS);
  assert.ok(pending.some((p) => p.key === "a-after"));
});
