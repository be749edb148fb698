// The gate as the model meets it: protected keys (`protect` on memoryTools and
// anthropicMemoryHandlers: readable, never written, renamed or deleted through a tool, a refusal
// naming the rule, nothing changed) and a run's budget counted across every tool, on both
// backends. The API stays unrestricted.

import assert from "node:assert/strict";
import {
  anthropicMemoryHandlers,
  ConfigError,
  history,
  memoryTools,
  openFileStore,
  runTool,
  Scope,
  type Store,
} from "../../mod.ts";
import { jetstreamTest, natsFixture } from "../_lib/jetstream_fixture.ts";
import { tempDir } from "../_lib/temp_dir.ts";

// Runs `fn` on a fresh file store and on a fresh jetstream store (when a nats-server is there).
function bothBackends(name: string, fn: (store: Store) => Promise<void>): void {
  Deno.test(`[file] ${name}`, async () => {
    await using dir = await tempDir();
    await fn(await openFileStore({ dir: dir.path }));
  });
  jetstreamTest(name, async () => {
    await using nats = await natsFixture();
    await fn(await nats.open());
  });
}

async function keysAndVersions(store: Store): Promise<string> {
  const items = await store.list();
  const counts = await Promise.all(items.map(async (i) => (await history(store, i.key)).length));
  return JSON.stringify([items, counts]);
}

bothBackends(
  "memoryTools({ protect }) lets the model read a protected key, never write or delete it",
  async (store) => {
    await store.create("policy.refunds", "Refund policy", "30 days");
    await store.create("owner", "Who owns this agent", "Sam");
    await store.create("notes", "Notes", "free");
    const scope = new Scope({ run: "run-model" });
    const tools = memoryTools(store, { scope, protect: ["policy.", "owner"] });
    const write = tools.find((t) => t.name === "memory_write")!;
    assert.match(
      write.description,
      /Protected in this run.*: every key that starts with "policy\." and "owner"\./,
    );
    const before = await keysAndVersions(store);
    const read = await runTool(tools, "memory_read", { key: "policy.refunds" });
    assert.equal(read.isError, false);
    assert.match(read.content, /30 days/);
    const attempts = [
      ["memory_write", {
        key: "policy.refunds",
        description: "d",
        content: "forever",
        overwrite: true,
      }, /rule "policy\." protects every key that starts with it/],
      [
        "memory_write",
        { key: "policy.new", description: "d", content: "planted" },
        /rule "policy\."/,
      ],
      [
        "memory_write",
        { key: "owner", description: "d", content: "Mallory", overwrite: true },
        /rule "owner" protects this key/,
      ],
      ["memory_delete", { key: "owner" }, /rule "owner".*Nothing was deleted/],
      ["memory_delete", { key: "policy.refunds" }, /protected in this run/],
    ] as const;
    for (const [tool, args, message] of attempts) {
      const result = await runTool(tools, tool, args);
      assert.equal(result.isError, true, `${tool} ${JSON.stringify(args)}`);
      assert.match(result.content, message);
      assert.match(result.content, /you may read it with memory_read, but not write or delete it/);
    }
    assert.equal(await keysAndVersions(store), before);
    // Keys the rules do not name are the model's; a prefix rule does not name the bare word.
    for (const key of ["notes2", "policy", "owner.x", "policyx"]) {
      const r = await runTool(tools, "memory_write", { key, description: "d", content: "ok" });
      assert.equal(r.isError, false, `${key}: ${r.content}`);
    }
    // The API is not restricted.
    await store.read("owner", { scope });
    await store.update("owner", "Who owns this agent", "Alex", { scope });
    assert.equal(await store.delete("policy.refunds"), true);
  },
);

bothBackends(
  "anthropicMemoryHandlers({ protect }) refuses every command that would change a protected file",
  async (store) => {
    const owner = anthropicMemoryHandlers(store, { scope: new Scope() });
    await owner.create({
      command: "create",
      path: "/memories/policy.md",
      file_text: "# Policy\nbe kind",
    });
    await owner.create({ command: "create", path: "/memories/team/lead.md", file_text: "Sam" });
    await owner.create({ command: "create", path: "/memories/team/a.md", file_text: "a" });
    await owner.create({ command: "create", path: "/memories/free.md", file_text: "free" });
    const memory = anthropicMemoryHandlers(store, {
      scope: new Scope(),
      protect: ["policy", "team=lead", "locked.", "draft"],
    });
    const before = await keysAndVersions(store);
    assert.match(await memory.view({ command: "view", path: "/memories/policy.md" }), /be kind/);
    const refused = [
      { command: "create", path: "/memories/locked.x.md", file_text: "planted" },
      { command: "str_replace", path: "/memories/policy.md", old_str: "be kind", new_str: "obey" },
      { command: "insert", path: "/memories/policy.md", insert_line: 0, insert_text: "obey" },
      { command: "delete", path: "/memories/policy.md" },
      { command: "delete", path: "/memories/team" },
      { command: "rename", old_path: "/memories/policy.md", new_path: "/memories/p.md" },
      { command: "rename", old_path: "/memories/free.md", new_path: "/memories/draft.md" },
      { command: "rename", old_path: "/memories/free.md", new_path: "/memories/locked.free.md" },
      { command: "rename", old_path: "/memories/team", new_path: "/memories/crew" },
    ] as const;
    for (const command of refused) {
      // deno-lint-ignore no-explicit-any
      const run = (memory as any)[command.command](command);
      await assert.rejects(run, (e: Error) => {
        assert.match(
          e.message,
          /is protected in this run \(rule "[^"]+" protects/,
          JSON.stringify(command),
        );
        assert.match(e.message, /Nothing was changed/);
        return true;
      });
    }
    assert.equal(await keysAndVersions(store), before);
    // A folder whose files are all free moves, and a free file is edited.
    await memory.rename({
      command: "rename",
      old_path: "/memories/free.md",
      new_path: "/memories/f.md",
    });
    assert.equal((await store.read("f")).content, "free");
  },
);

Deno.test("protect refuses an entry that is no key or key prefix, naming what is legal", async () => {
  await using dir = await tempDir();
  const store = await openFileStore({ dir: dir.path });
  for (const bad of [["a/b"], [".x"], ["x.."], [""], [3], "policy.", { p: 1 }]) {
    for (
      const make of [
        () => memoryTools(store, { protect: bad as string[] }),
        () => anthropicMemoryHandlers(store, { scope: null, protect: bad as string[] }),
      ]
    ) {
      assert.throws(make, (e: unknown) => {
        assert.ok(e instanceof ConfigError, String(e));
        assert.match(e.message, /option "protect" .*legal keys, or key prefixes ending in "\."/);
        return true;
      });
    }
  }
});

bothBackends(
  "a run's budget counts across memoryTools and Claude's memory tool, and the model is told",
  async (store) => {
    await store.create("a", "about a", "one");
    await store.create("b", "about b", "two");
    await store.create("c", "about c", "three");
    const scope = new Scope({ run: "run-budget", budget: { writes: 3, deletes: 1 } });
    const tools = memoryTools(store, { scope });
    const memory = anthropicMemoryHandlers(store, { scope });
    assert.equal(
      (await runTool(tools, "memory_write", { key: "n", description: "d", content: "x" })).isError,
      false,
    );
    // A str_replace writes through a scope of its own, which counts against the run's budget.
    await memory.str_replace({
      command: "str_replace",
      path: "/memories/a.md",
      old_str: "one",
      new_str: "1",
    });
    await memory.create({ command: "create", path: "/memories/m.md", file_text: "m" });
    assert.deepEqual(scope.used, { writes: 3, deletes: 0 });
    const refused = await runTool(tools, "memory_write", {
      key: "o",
      description: "d",
      content: "x",
    });
    assert.equal(refused.isError, true);
    assert.match(
      refused.content,
      /this run has used its 3 writes, all its budget allows.*Nothing was written\. Do not retry/,
    );
    await assert.rejects(
      memory.insert({
        command: "insert",
        path: "/memories/b.md",
        insert_line: 0,
        insert_text: "x",
      }),
      /this run has used its 3 writes/,
    );
    // A rename needs a write and a delete: refused before anything moves, no copy left behind.
    const before = await keysAndVersions(store);
    await assert.rejects(
      memory.rename({ command: "rename", old_path: "/memories/b.md", new_path: "/memories/z.md" }),
      /this run has used its 3 writes/,
    );
    assert.equal(await keysAndVersions(store), before);
    assert.equal((await runTool(tools, "memory_delete", { key: "b" })).isError, false);
    const second = await runTool(tools, "memory_delete", { key: "c" });
    assert.match(
      second.content,
      /this run has used its 1 delete, all its budget allows.*Nothing was deleted/,
    );
    await assert.rejects(
      memory.delete({ command: "delete", path: "/memories/c.md" }),
      /its 1 delete/,
    );
    assert.deepEqual((await store.list()).map((i) => i.key), ["a", "c", "m", "n"]);
  },
);
