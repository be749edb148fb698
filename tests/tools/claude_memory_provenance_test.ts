// Every command of Claude's memory tool records the run's provenance exactly (run, actor, taint,
// `via: claude_memory:<command>`, the tool call's id), on both backends, so `revertRun` of a
// tainted run undoes all it did: edits and renames included, which once went under a fresh run.

import assert from "node:assert/strict";
import {
  anthropicMemoryHandlers,
  auditLog,
  openFileStore,
  revertRun,
  Scope,
  type Store,
} from "../../mod.ts";
import { jetstreamTest, natsFixture } from "../_lib/jetstream_fixture.ts";
import { tempDir } from "../_lib/temp_dir.ts";

async function taintedRun(store: Store): Promise<void> {
  const good = anthropicMemoryHandlers(store, { scope: new Scope({ run: "run-good" }) });
  await good.create({ command: "create", path: "/memories/keep.md", file_text: "# Keep\nkept" });
  await good.create({ command: "create", path: "/memories/gone.md", file_text: "# Gone\nsoon" });
  const scope = new Scope({ run: "run-bad", actor: "agent:x", tainted: true });
  const bad = anthropicMemoryHandlers(store, { scope });
  let n = 0;
  const ctx = () => ({ toolUse: { id: `toolu_${++n}` } });
  await bad.view({ command: "view", path: "/memories/keep.md" }, ctx());
  await bad.create({ command: "create", path: "/memories/a.md", file_text: "# A\none" }, ctx());
  await bad.str_replace(
    { command: "str_replace", path: "/memories/a.md", old_str: "one", new_str: "two" },
    ctx(),
  );
  await bad.insert(
    { command: "insert", path: "/memories/a.md", insert_line: 2, insert_text: "three" },
    ctx(),
  );
  await bad.rename(
    { command: "rename", old_path: "/memories/a.md", new_path: "/memories/b.md" },
    ctx(),
  );
  await bad.str_replace(
    { command: "str_replace", path: "/memories/keep.md", old_str: "kept", new_str: "obey me" },
    ctx(),
  );
  await bad.delete({ command: "delete", path: "/memories/gone.md" }, ctx());

  const versions = await auditLog(store);
  const mine = versions.filter((v) => v.run !== "run-good");
  // auditLog orders across keys by the writers' clocks, which tie within a millisecond: compare
  // as sets.
  const seen = mine.map((v) => [v.key, v.op, v.via, v.callId].join(" ")).sort();
  assert.deepEqual(
    seen,
    [
      "a create claude_memory:create toolu_2",
      "a update claude_memory:str_replace toolu_3",
      "a update claude_memory:insert toolu_4",
      "b create claude_memory:rename toolu_5",
      "a delete claude_memory:rename toolu_5",
      "keep update claude_memory:str_replace toolu_6",
      "gone delete claude_memory:delete toolu_7",
    ].sort(),
  );
  for (const v of mine) {
    assert.equal(v.run, "run-bad", `${v.key} ${v.op} (${v.via}) recorded under ${v.run}`);
    assert.equal(v.actor, "agent:x", `${v.key} ${v.op} (${v.via})`);
    assert.equal(v.tainted, true, `${v.key} ${v.op} (${v.via})`);
  }

  await revertRun(store, "run-bad");
  assert.deepEqual((await store.list()).map((i) => i.key), ["gone", "keep"]);
  assert.equal((await store.read("keep")).content, "# Keep\nkept");
  assert.equal((await store.read("gone")).content, "# Gone\nsoon");
}

// A clean run that edits (or views, or moves) a memory a tainted run wrote last is tainted from
// then on, and so is what it writes; a scope that opted out stays clean.
async function taintOnRead(store: Store): Promise<void> {
  const bad = anthropicMemoryHandlers(store, {
    scope: new Scope({ run: "run-bad", tainted: true }),
  });
  for (const name of ["a", "b", "c"]) {
    await bad.create({ command: "create", path: `/memories/${name}.md`, file_text: "poison" });
  }
  const edit = (scope: Scope, path: string) =>
    anthropicMemoryHandlers(store, { scope }).str_replace({
      command: "str_replace",
      path,
      old_str: "poison",
      new_str: "copied",
    });
  const edited = new Scope({ run: "run-edit" });
  await edit(edited, "/memories/a.md");
  assert.equal(edited.tainted, true);
  const [version] = await auditLog(store, { run: "run-edit" });
  assert.equal(version?.tainted, true, "the edit of tainted text was recorded clean");
  const moved = new Scope({ run: "run-move" });
  await anthropicMemoryHandlers(store, { scope: moved }).rename({
    command: "rename",
    old_path: "/memories/b.md",
    new_path: "/memories/d.md",
  });
  assert.equal(moved.tainted, true);
  const viewer = new Scope();
  await anthropicMemoryHandlers(store, { scope: viewer }).view({
    command: "view",
    path: "/memories/c.md",
  });
  assert.equal(viewer.tainted, true);
  const optedOut = new Scope({ run: "run-out", propagateTaint: false });
  await edit(optedOut, "/memories/c.md");
  assert.equal(optedOut.tainted, false);
  assert.equal((await auditLog(store, { run: "run-out" }))[0]?.tainted, false);
}

Deno.test("[file] a Claude memory edit, move or view of a tainted memory taints the run", async () => {
  await using dir = await tempDir();
  await taintOnRead(await openFileStore({ dir: dir.path }));
});

jetstreamTest("a Claude memory edit, move or view of a tainted memory taints the run", async () => {
  await using nats = await natsFixture();
  await taintOnRead(await nats.open());
});

Deno.test("[file] every Claude memory command records the run, actor, taint, via and call id; revertRun undoes them all", async () => {
  await using dir = await tempDir();
  await taintedRun(await openFileStore({ dir: dir.path }));
});

jetstreamTest(
  "every Claude memory command records the run, actor, taint, via and call id; revertRun undoes them all",
  async () => {
    await using nats = await natsFixture();
    await taintedRun(await nats.open());
  },
);

Deno.test("with scope null, Claude memory edits record no run, as the run's other writes", async () => {
  await using dir = await tempDir();
  const store = await openFileStore({ dir: dir.path });
  const memory = anthropicMemoryHandlers(store, { scope: null });
  await memory.create({ command: "create", path: "/memories/a.md", file_text: "one" });
  await memory.str_replace({
    command: "str_replace",
    path: "/memories/a.md",
    old_str: "one",
    new_str: "two",
  });
  await memory.insert({
    command: "insert",
    path: "/memories/a.md",
    insert_line: 0,
    insert_text: "",
  });
  await memory.rename({
    command: "rename",
    old_path: "/memories/a.md",
    new_path: "/memories/b.md",
  });
  const versions = await auditLog(store);
  assert.equal(versions.length, 5);
  for (const v of versions) {
    assert.equal(v.run, undefined, `${v.key} ${v.op} (${v.via})`);
    assert.equal(v.tainted, false);
  }
});
