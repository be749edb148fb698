// The claims behind a decision, on both backends: a live claim keeps other deciders out; a claim
// abandoned past its lease (its holder died) is taken over, and the taker finishes an approval
// whose write had landed instead of writing it again. Proposals expire with the history's days.
// Claims are made here through the backend's review storage, as a decider that died would have.

import assert from "node:assert/strict";
import {
  approveProposal,
  history,
  NotFoundError,
  openFileStore,
  proposals,
  rejectProposal,
  Scope,
  type Store,
} from "../../mod.ts";
import { extensionsOf } from "../../store/build.ts";
import type { Call, HistoryOps, ReviewOps } from "../../store/backend.ts";
import { CLAIM_LEASE_MS } from "../../store/review.ts";
import { validateWrite } from "../../store/validate.ts";
import { jetstreamTest, natsFixture } from "../_lib/jetstream_fixture.ts";
import { tempDir } from "../_lib/temp_dir.ts";

function bothBackends(name: string, fn: (open: (o?: object) => Promise<Store>) => Promise<void>) {
  Deno.test(`[file] ${name}`, async () => {
    await using dir = await tempDir();
    await fn((o = {}) => openFileStore({ dir: dir.path, review: "tainted", ...o }));
  });
  jetstreamTest(name, async () => {
    await using nats = await natsFixture();
    await fn((o = {}) => nats.open({ review: "tainted", ...o }));
  });
}

function internals(store: Store): { history: HistoryOps; review: ReviewOps } {
  const history = extensionsOf(store)!.ops.history!;
  return { history, review: history.review! };
}

function call(scope: Scope | null = null): Call {
  return { signal: undefined, scope, checked: false, via: "review", callId: undefined };
}

// A tainted run's update of "plan", held; returns its proposal id and the head it was made on.
async function heldUpdate(store: Store): Promise<{ id: string; head: string }> {
  await store.create("plan", "The plan", "v1");
  const bad = new Scope({ run: "run-bad", tainted: true });
  await store.read("plan", { scope: bad });
  await store.update("plan", "The plan", "v2 held", { scope: bad });
  const [p] = await proposals(store);
  return { id: p!.id, head: p!.base! };
}

bothBackends(
  "a live claim keeps every other decider out, and the proposal stays pending",
  async (open) => {
    const store = await open();
    const { id, head } = await heldUpdate(store);
    const { review } = internals(store);
    const now = Date.now();
    await review.claim(id, {
      token: "a".repeat(16),
      at: now,
      expected: head,
      takeOverBefore: now - CLAIM_LEASE_MS,
    }, call());
    for (const decide of [approveProposal, rejectProposal]) {
      await assert.rejects(decide(store, id), (e: Error) => {
        assert.ok(e instanceof NotFoundError, String(e));
        assert.match(e.message, /another operator is deciding it right now/);
        return true;
      });
    }
    // Still pending for everyone to see.
    assert.deepEqual((await proposals(store)).map((p) => p.id), [id]);
  },
);

bothBackends(
  "an approval that died after its write landed is finished, not written again",
  async (open) => {
    const store = await open();
    const { id, head } = await heldUpdate(store);
    const { history: h, review } = internals(store);
    const long = Date.now() - 2 * CLAIM_LEASE_MS;
    const { proposal } = await review.claim(id, {
      token: "c".repeat(16),
      at: long,
      expected: head,
      actor: "op-dead",
      takeOverBefore: 0,
    }, call());
    // The dead approver's write, as it would have made it.
    const write = validateWrite("plan", proposal.description, proposal.content);
    const landed = await h.commitIf("plan", head, write, call(new Scope({ run: "run-bad" })));
    const done = await approveProposal(store, id, { scope: new Scope({ actor: "op-live" }) });
    assert.deepEqual([done.decision?.outcome, done.decision?.revision], ["approved", landed]);
    assert.equal(done.decision?.actor, "op-dead");
    assert.deepEqual((await history(store, "plan")).map((v) => v.via), ["review", "api"]);
    assert.equal((await store.read("plan")).content, "v2 held");
  },
);

bothBackends(
  "an approval that died before its write is taken over and written once",
  async (open) => {
    const store = await open();
    const { id, head } = await heldUpdate(store);
    const { review } = internals(store);
    await review.claim(id, {
      token: "d".repeat(16),
      at: Date.now() - 2 * CLAIM_LEASE_MS,
      expected: head,
      takeOverBefore: 0,
    }, call());
    const done = await approveProposal(store, id, { scope: new Scope({ actor: "op-live" }) });
    assert.equal(done.decision?.actor, "op-live");
    assert.deepEqual((await history(store, "plan")).map((v) => v.via), ["review", "api"]);
  },
);

bothBackends(
  "proposals expire with the history retention's days, decided ones too",
  async (open) => {
    // 2 seconds of retention by age (days may be a fraction).
    const store = await open({ history: { days: 2 / 86_400 } });
    await store.create("a", "about a", "held", { scope: new Scope({ tainted: true }) });
    await store.create("b", "about b", "held", { scope: new Scope({ tainted: true }) });
    const [a] = await proposals(store);
    await rejectProposal(store, a!.id);
    assert.equal((await proposals(store, { status: "all" })).length, 2);
    await new Promise((r) => setTimeout(r, 2_500));
    assert.deepEqual(await proposals(store, { status: "all" }), []);
    await assert.rejects(approveProposal(store, a!.id), NotFoundError);
    // A store that keeps versions for good (days: 0) keeps its proposals too.
    const kept = await open({ history: { days: 0 } });
    await kept.create("c", "about c", "held", { scope: new Scope({ tainted: true }) });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await proposals(kept)).length, 1);
  },
);
