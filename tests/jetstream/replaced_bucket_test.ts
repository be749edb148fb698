// A jetstream handle left open while its bucket is deleted and created again (issue 22, part 5):
// once it has seen the bucket gone, no revision read in the old bucket authorizes a write in the
// new one, and the handle works again without a reopen.

import assert from "node:assert/strict";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import {
  createJetStreamBucket,
  JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  Scope,
  serializeEntry,
  StaleError,
  type Store,
  UnavailableError,
} from "../../mod.ts";
import { BUCKET, jetstreamTest as test, natsFixture } from "../_lib/jetstream_fixture.ts";

type Fixture = Awaited<ReturnType<typeof natsFixture>>;

// Creates the destroyed bucket again with "run.k" at `revision`, written by someone else.
async function recreate(f: Fixture, revision: number): Promise<void> {
  await createJetStreamBucket(f.nc, {
    bucket: BUCKET,
    replicas: 1,
    storage: "file",
    maxValueSize: JETSTREAM_HISTORY_MIN_VALUE_SIZE,
  });
  const kv = await new Kvm(f.nc).open(BUCKET);
  const jsm = await jetstreamManager(f.nc);
  for (let i = 1; (await jsm.streams.info(`KV_${BUCKET}`)).state.last_seq < revision - 1; i++) {
    await kv.put(`run.filler${i}`, serializeEntry("f", "x"));
  }
  assert.equal(await kv.put("run.k", serializeEntry("theirs", "their content")), revision);
}

async function readBack(f: Fixture): Promise<string> {
  const other = await f.open();
  return (await other.read("k")).content;
}

// Opens a handle, writes and reads "k" in one scope; returns both and k's revision.
async function seeded(f: Fixture): Promise<{ store: Store; scope: Scope; revision: number }> {
  const store = await f.open();
  const scope = new Scope();
  await store.create("k", "mine", "my content", { scope });
  await store.read("k", { scope });
  const revision = (await f.kv.get("run.k"))?.revision as number;
  return { store, scope, revision };
}

for (const seenBy of ["read", "update", "list", "create", "delete"] as const) {
  test(`a handle that saw its bucket deleted (by a ${seenBy}) refuses an update authorized in the old bucket`, async () => {
    await using f = await natsFixture();
    const { store, scope, revision } = await seeded(f);
    await f.kv.destroy();
    const calls: Record<typeof seenBy, () => Promise<unknown>> = {
      read: () => store.read("k", { scope }),
      update: () => store.update("k", "mine", "lost", { scope }),
      list: () => store.list({ scope }),
      create: () => store.create("n", "d", "c", { scope }),
      delete: () => store.delete("other", { scope }),
    };
    const seen = await calls[seenBy]().then(() => "succeeded", (e) => e);
    assert.ok(seen instanceof UnavailableError, `${seenBy}: ${seen}`);
    assert.match(seen.message, /no longer exists/);

    await recreate(f, revision);
    const e = await store.update("k", "mine", "overwritten", { scope }).then(() => "ok", (e) => e);
    assert.ok(e instanceof StaleError, `the update with the old revision: ${e}`);
    assert.equal(await readBack(f), "their content");
  });
}

test("after its bucket was replaced, a handle reads and writes the new bucket without a reopen", async () => {
  await using f = await natsFixture();
  const { store, scope, revision } = await seeded(f);
  await f.kv.destroy();
  await assert.rejects(store.read("k", { scope }), /no longer exists/);
  await recreate(f, revision);
  // A fresh read in the new bucket authorizes an update there.
  assert.equal((await store.read("k", { scope })).content, "their content");
  await store.update("k", "mine", "read, then updated", { scope });
  assert.equal(await readBack(f), "read, then updated");
  await store.create("fresh", "d", "c", { scope });
  const keys = (await store.list()).map((i) => i.key).filter((k) => !k.startsWith("filler"));
  assert.deepEqual(keys, ["fresh", "k"]);
});
