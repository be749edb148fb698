// Operators deciding the same proposals at once, each in its own process, on both backends: every
// proposal is decided exactly once (one approval writes it once; the other deciders are told it
// was decided), and a rejection racing an approval leaves the memory as the one decision says.

import assert from "node:assert/strict";
import { history, openFileStore, proposals, Scope, type Store } from "../../mod.ts";
import { spawnDeno } from "../_lib/spawn.ts";
import { jetstreamTest, natsFixture } from "../_lib/jetstream_fixture.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import type { DecideJob } from "./_decide_worker.ts";

const WORKER = new URL("./_decide_worker.ts", import.meta.url).pathname;
const KEYS = 12;

// Holds a tainted run's update of each of KEYS memories and a create of as many more.
async function heldWrites(store: Store): Promise<string[]> {
  const clean = new Scope();
  for (let i = 0; i < KEYS; i++) {
    await store.create(`k${i}`, `about k${i}`, "clean", { scope: clean });
  }
  const bad = new Scope({ run: "run-bad", tainted: true });
  for (let i = 0; i < KEYS; i++) {
    await store.read(`k${i}`, { scope: bad });
    await store.update(`k${i}`, `about k${i}`, `held ${i}`, { scope: bad });
    await store.create(`n${i}`, `about n${i}`, `held new ${i}`, { scope: bad });
  }
  return (await proposals(store)).map((p) => p.id);
}

async function race(
  store: DecideJob["store"],
  ids: readonly string[],
  deciders: readonly DecideJob["decide"][],
) {
  const startAt = Date.now() + 1_500;
  const children = deciders.map((decide, i) =>
    spawnDeno(WORKER, [JSON.stringify({ store, decide, ids, startAt, actor: `op${i}` })], {
      name: `operator ${i} (${decide})`,
      timeLimitMs: 90_000,
    })
  );
  try {
    for (const c of children) await c.waitFor("ready");
    for (const c of children) await c.succeeded();
    return children.map((c, i) => ({ decide: deciders[i]!, records: [...c.records] }));
  } finally {
    for (const c of children) await c[Symbol.asyncDispose]();
  }
}

async function decidedOnce(opened: Store, store: DecideJob["store"], mixed: boolean) {
  const ids = await heldWrites(opened);
  const results = await race(store, ids, mixed ? ["approve", "reject"] : ["approve", "approve"]);
  const winners = new Map<string, string>();
  for (const { decide, records } of results) {
    for (const r of records) {
      if (r.t === "refused") assert.equal(r.code, "not_found", JSON.stringify(r));
      if (r.t !== "decided") continue;
      assert.equal(winners.has(r.id as string), false, `${r.id} decided twice`);
      winners.set(r.id as string, decide);
    }
  }
  assert.deepEqual([...winners.keys()].sort(), [...ids].sort());
  assert.deepEqual(await proposals(opened), []);
  const decided = await proposals(opened, { status: "decided" });
  assert.equal(decided.length, ids.length);
  for (const p of decided) {
    const outcome = winners.get(p.id) === "approve" ? "approved" : "rejected";
    assert.equal(p.decision?.outcome, outcome, p.id);
    const reviewed = (await history(opened, p.key)).filter((v) => v.via === "review");
    assert.equal(reviewed.length, outcome === "approved" ? 1 : 0, `${p.key}: ${reviewed.length}`);
    const now = await opened.read(p.key).then((e) => e.content, () => undefined);
    const held = p.op === "create" ? `held new ${p.key.slice(1)}` : `held ${p.key.slice(1)}`;
    const before = p.op === "create" ? undefined : "clean";
    assert.equal(now, outcome === "approved" ? held : before, p.key);
  }
  if (!mixed) assert.ok([...winners.values()].every((d) => d === "approve"));
}

Deno.test("[file] two operators in two processes approving the same proposals write each once", async () => {
  await using dir = await tempDir();
  const opened = await openFileStore({ dir: dir.path, review: "tainted" });
  await decidedOnce(opened, { dir: dir.path }, false);
});

Deno.test("[file] an approval and a rejection racing in two processes decide each proposal once", async () => {
  await using dir = await tempDir();
  const opened = await openFileStore({ dir: dir.path, review: "tainted" });
  await decidedOnce(opened, { dir: dir.path }, true);
});

jetstreamTest(
  "two operators in two processes approving the same proposals write each once",
  async () => {
    await using nats = await natsFixture();
    const opened = await nats.open({ review: "tainted" });
    await decidedOnce(opened, { servers: nats.server.url, bucket: "memory" }, false);
  },
);

jetstreamTest(
  "an approval and a rejection racing in two processes decide each proposal once",
  async () => {
    await using nats = await natsFixture();
    const opened = await nats.open({ review: "tainted" });
    await decidedOnce(opened, { servers: nats.server.url, bucket: "memory" }, true);
  },
);
