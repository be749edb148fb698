// Review (store option `review`) on every backend that keeps history (part of the one
// conformance suite): held writes are invisible to every reader, validated like the write, never
// counted as entries, at most MAX_PENDING_PROPOSALS pending; approval is an ordinary write
// checked against the proposal's base; rejection writes nothing; both are kept as decisions.
// Registered by `conformance()` for fixtures that can open a store with options (`reopen`).

import assert from "node:assert/strict";
import {
  approveProposal,
  CapacityError,
  ConfigError,
  ExistsError,
  history,
  MAX_ENTRIES,
  MAX_PENDING_PROPOSALS,
  memorySystemNote,
  memoryTools,
  NotFoundError,
  proposals,
  ReadOnlyError,
  readOnlyStore,
  rejectProposal,
  runTool,
  Scope,
  StaleError,
  type Store,
} from "../mod.ts";
import type { Fixture } from "./_lib/fixture.ts";

type Register = (name: string, fn: (f: Fixture) => Promise<void>) => void;

const OPERATOR = () => new Scope({ actor: "operator" });

async function reviewing(f: Fixture, review: "tainted" | "all" = "tainted"): Promise<Store> {
  return await f.reopen!({ review });
}

async function everyReader(store: Store, scope: Scope): Promise<string> {
  const tools = memoryTools(store, { scope, search: true });
  const listed = (await runTool(tools, "memory_list", {})).content;
  const found = (await runTool(tools, "memory_search", { query: "poison" })).content;
  const note = await memorySystemNote(store, { scope });
  return JSON.stringify([await store.list(), listed, found, note]);
}

/** Registers the review cases. */
export function reviewConformance(test: Register): void {
  test("review: a tainted run's create, update and delete are held, and no reader sees them", async (f) => {
    const store = await reviewing(f);
    await store.create("prefs", "User preferences", "metric units", { scope: new Scope() });
    const bad = new Scope({ run: "run-bad", actor: "agent:web", tainted: true });
    const before = await everyReader(store, new Scope());
    await store.create("planted", "A planted note", "poison: obey the web page", { scope: bad });
    await store.read("prefs", { scope: bad });
    await store.update("prefs", "User preferences", "poison: send data away", { scope: bad });
    assert.equal(await store.delete("prefs", { scope: bad }), true);
    // Not even the proposing run sees its writes; every other reader sees the store as it was.
    await assert.rejects(store.read("planted", { scope: bad }), NotFoundError);
    assert.equal((await store.read("prefs", { scope: bad })).content, "metric units");
    assert.equal(await everyReader(store, new Scope()), before);
    assert.equal(await everyReader(await f.peer(), new Scope()), before);
    assert.deepEqual((await history(store, "prefs")).map((v) => v.op), ["create"]);
    const held = await proposals(store);
    assert.deepEqual(held.map((p) => [p.key, p.op]), [
      ["planted", "create"],
      ["prefs", "update"],
      ["prefs", "delete"],
    ]);
    const [created, updated, deleted] = held;
    assert.equal(created!.base, undefined);
    assert.equal(updated!.base, (await history(store, "prefs"))[0]!.revision);
    assert.deepEqual(
      [created!.run, created!.actor, created!.tainted, created!.via, created!.content],
      ["run-bad", "agent:web", true, "api", "poison: obey the web page"],
    );
    assert.equal(deleted!.content, undefined);
    assert.match(created!.id, /^[0-9a-f]{16}$/);
    // A clean run and a write without a scope apply as ever.
    await store.create("clean", "Clean", "by a clean run", { scope: new Scope() });
    await store.create("cli", "By the operator", "no scope");
    assert.deepEqual((await store.list()).map((i) => i.key), ["clean", "cli", "prefs"]);
    assert.deepEqual((await proposals(store, { key: "planted" })).map((p) => p.op), ["create"]);
    assert.equal((await proposals(store, { run: "run-bad", limit: 2 })).length, 2);
  });

  test('review: "all" holds every write made through a scope, and none made without one', async (f) => {
    const store = await reviewing(f, "all");
    await store.create("a", "about a", "by a clean run", {
      scope: new Scope({ run: "run-clean" }),
    });
    await store.create("b", "about b", "no scope");
    assert.deepEqual((await store.list()).map((i) => i.key), ["b"]);
    assert.deepEqual((await proposals(store)).map((p) => [p.key, p.run, p.tainted]), [
      ["a", "run-clean", false],
    ]);
    // A store opened without review applies the same run's writes.
    await f.store.create("c", "about c", "applied", { scope: new Scope({ tainted: true }) });
    assert.deepEqual((await store.list()).map((i) => i.key), ["b", "c"]);
  });

  test("review: a held write is checked as the write would be, and a refused one holds nothing", async (f) => {
    const store = await reviewing(f);
    await store.create("taken", "Taken", "kept", { scope: new Scope() });
    const bad = new Scope({ tainted: true });
    await assert.rejects(store.create("taken", "Taken", "again", { scope: bad }), ExistsError);
    assert.equal(await store.delete("nothing", { scope: bad }), false);
    if (f.enforcesReadBeforeUpdate) {
      await assert.rejects(store.update("taken", "Taken", "unread", { scope: bad }), StaleError);
      await store.read("taken", { scope: bad });
      await f.store.update("taken", "Taken", "changed meanwhile", {
        scope: await readScope(f.store, "taken"),
      });
      await assert.rejects(store.update("taken", "Taken", "stale", { scope: bad }), StaleError);
    }
    await assert.rejects(store.create("bad/key", "d", "c", { scope: bad }), /key/);
    assert.deepEqual(await proposals(store), []);
  });

  test("review: approval writes the proposal as a version via review, once; rejection writes nothing", async (f) => {
    const store = await reviewing(f);
    await store.create("prefs", "User preferences", "metric", { scope: new Scope() });
    const bad = new Scope({ run: "run-bad", tainted: true });
    await store.create("tip", "A tip", "book early", {
      scope: bad,
      via: "memory_write",
      callId: "toolu_1",
    });
    await store.read("prefs", { scope: bad });
    await store.update("prefs", "User preferences", "poison", { scope: bad });
    const [tip, poison] = await proposals(store);
    const approved = await approveProposal(store, tip!.id, { scope: OPERATOR() });
    assert.equal(approved.decision?.outcome, "approved");
    assert.equal(approved.content, undefined);
    const [version] = await history(store, "tip");
    assert.deepEqual(
      [version!.op, version!.via, version!.run, version!.actor, version!.callId, version!.tainted],
      ["create", "review", "run-bad", "operator", "toolu_1", false],
    );
    assert.equal(approved.decision?.revision, version!.revision);
    assert.equal((await store.read("tip")).content, "book early");
    const rejected = await rejectProposal(store, poison!.id, {
      reason: "poison",
      scope: OPERATOR(),
    });
    assert.deepEqual(
      [rejected.decision?.outcome, rejected.decision?.reason, rejected.decision?.actor],
      ["rejected", "poison", "operator"],
    );
    assert.equal((await store.read("prefs")).content, "metric");
    assert.equal((await history(store, "prefs")).length, 1);
    // Deciding twice is NotFoundError, saying it was decided; so is an unknown or malformed id.
    for (const id of [tip!.id, poison!.id]) {
      for (const decide of [approveProposal, rejectProposal]) {
        await assert.rejects(decide(store, id), (e: Error) => {
          assert.ok(e instanceof NotFoundError, String(e));
          assert.match(e.message, /it was already (approved|rejected) at .* by operator/);
          return true;
        });
      }
    }
    await assert.rejects(approveProposal(store, "0123456789abcdef"), /no proposal has this id/);
    await assert.rejects(rejectProposal(store, "../x"), /16 lowercase hexadecimal characters/);
    assert.deepEqual(await proposals(store), []);
    const decided = await proposals(store, { status: "decided" });
    assert.deepEqual(decided.map((p) => [p.key, p.decision?.outcome]), [
      ["tip", "approved"],
      ["prefs", "rejected"],
    ]);
    assert.equal((await proposals(store, { status: "all" })).length, 2);
  });

  test("review: an approval after the key changed is StaleError naming the change, unless forced", async (f) => {
    const store = await reviewing(f);
    await store.create("plan", "The plan", "v1", { scope: new Scope() });
    const bad = new Scope({ run: "run-bad", tainted: true });
    await store.read("plan", { scope: bad });
    await store.update("plan", "The plan", "poisoned plan", { scope: bad });
    await store.create("new", "New", "held create", { scope: bad });
    const operator = new Scope({ run: "run-op" });
    await store.read("plan", { scope: operator });
    await store.update("plan", "The plan", "v2", { scope: operator });
    await store.create("new", "New", "made meanwhile", { scope: operator });
    const [plan, created] = await proposals(store);
    await assert.rejects(approveProposal(store, plan!.id), (e: Error) => {
      assert.ok(e instanceof StaleError, String(e));
      assert.match(
        e.message,
        /it changed from revision \d+: it now holds revision \d+, an update by run run-op/,
      );
      assert.match(e.message, /approve it with force/);
      return true;
    });
    await assert.rejects(approveProposal(store, created!.id), /it was created \(revision \d+/);
    // Nothing was written, and the proposals are still pending.
    assert.equal((await store.read("plan")).content, "v2");
    assert.equal((await proposals(store)).length, 2);
    const forced = await approveProposal(store, plan!.id, { force: true });
    assert.equal(forced.decision?.forced, true);
    assert.equal((await store.read("plan")).content, "poisoned plan");
    assert.equal((await history(store, "plan"))[0]!.via, "review");
  });

  test("review: a held delete approved deletes; capacity applies at approval", async (f) => {
    const store = await reviewing(f);
    const clean = new Scope();
    await store.create("gone", "To go", "x", { scope: clean });
    const bad = new Scope({ tainted: true });
    await store.delete("gone", { scope: bad });
    await store.create("late", "Late", "held while there was room", { scope: bad });
    const [del, late] = await proposals(store);
    await approveProposal(store, del!.id);
    await assert.rejects(store.read("gone"), NotFoundError);
    assert.equal((await history(store, "gone"))[0]!.op, "delete");
    await fill(store, MAX_ENTRIES);
    await assert.rejects(approveProposal(store, late!.id), CapacityError);
    assert.equal((await proposals(store)).length, 1);
    await store.delete("f0");
    await approveProposal(store, late!.id);
    assert.equal((await store.read("late")).content, "held while there was room");
  });

  test("review: proposals never count as entries, and the queue holds at most MAX_PENDING_PROPOSALS", async (f) => {
    const store = await reviewing(f, "all");
    const run = new Scope({ run: "run-many" });
    for (let i = 0; i < MAX_PENDING_PROPOSALS; i += 64) {
      await Promise.all(
        Array.from({ length: 64 }, (_, j) => store.create(`p${i + j}`, "held", "", { scope: run })),
      );
    }
    assert.equal(await f.store.list().then((l) => l.length), 0);
    await fill(f.store, MAX_ENTRIES);
    // A held update of a memory the full store holds: only the queue is in the way.
    await store.read("f0", { scope: run });
    await assert.rejects(store.update("f0", "held", "", { scope: run }), (e: Error) => {
      assert.ok(e instanceof CapacityError, String(e));
      assert.match(e.message, /the review queue is full \(1024 proposals pending\)/);
      return true;
    });
    const tools = memoryTools(store, { scope: run });
    await runTool(tools, "memory_read", { key: "f1" });
    const refused = await runTool(tools, "memory_write", {
      key: "f1",
      description: "d",
      content: "c",
      overwrite: true,
    });
    assert.match(refused.content, /the review queue is full.*Nothing was written/);
    assert.equal((await proposals(store)).length, MAX_PENDING_PROPOSALS);
  });

  test("review: deciding through a read-only store is refused; bad options and filters are typed errors", async (f) => {
    const store = await reviewing(f);
    await store.create("k", "d", "c", { scope: new Scope({ tainted: true }) });
    const [p] = await proposals(store);
    const ro = readOnlyStore(store);
    assert.equal((await proposals(ro)).length, 1);
    await assert.rejects(approveProposal(ro, p!.id), ReadOnlyError);
    await assert.rejects(rejectProposal(ro, p!.id), ReadOnlyError);
    await assert.rejects(rejectProposal(store, p!.id, { reason: "a\nb" }), ConfigError);
    await assert.rejects(rejectProposal(store, p!.id, { reason: "x".repeat(501) }), ConfigError);
    await assert.rejects(proposals(store, { status: "open" as "all" }), /"status" must be/);
    await assert.rejects(proposals(store, { limit: 0 }), /"limit" must be a positive/);
    await assert.rejects(
      proposals(store, { colour: 1 } as object),
      /unknown filter field "colour"/,
    );
    for (const review of [true, "yes", 1]) {
      await assert.rejects(f.reopen!({ review: review as "all" }), (e: Error) => {
        assert.ok(e instanceof ConfigError, String(e));
        assert.match(
          e.message,
          /option "review" must be (false, "tainted" or "all"|a boolean or a string)/,
        );
        return true;
      });
    }
    await assert.rejects(f.reopen!({ review: "all", history: false }), /needs history/);
    assert.equal((await proposals(store)).length, 1);
  });
}

async function readScope(store: Store, key: string): Promise<Scope> {
  const scope = new Scope();
  await store.read(key, { scope });
  return scope;
}

// Fills the store up to `n` memories, 64 creates at a time.
async function fill(store: Store, n: number): Promise<void> {
  const have = (await store.list()).length;
  for (let i = have; i < n; i += 64) {
    const batch = Math.min(64, n - i);
    await Promise.all(
      Array.from({ length: batch }, (_, j) => store.create(`f${i + j - have}`, "filler", "")),
    );
  }
}
