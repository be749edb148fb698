// Claude's memory tool through the SDK's own handler interface (betaMemoryTool): str_replace
// follows the tool's documented semantics (whole-text, exactly once, multi-line allowed, an
// omitted new_str deletes), unlike the TypeScript SDK's filesystem tool; and the handlers'
// read-modify-write never loses an edit, even on a file store without readBeforeUpdate, in one
// process and across two; a rename racing an edit loses nothing.

import assert from "node:assert/strict";
import { BetaLocalFilesystemMemoryTool, betaMemoryTool } from "@anthropic-ai/sdk/tools/memory/node";
import {
  type AnthropicMemoryHandlers,
  anthropicMemoryHandlers,
  openFileStore,
  Scope,
  type Store,
} from "../../mod.ts";
import { countingStale, renameRaces } from "./_helpers.ts";
import { spawnDeno } from "../_lib/spawn.ts";
import { tempDir } from "../_lib/temp_dir.ts";

async function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  await using dir = await tempDir();
  return await fn(dir.path);
}

// Runs one command through the SDK's betaMemoryTool, as its tool runner does.
async function viaSdk(
  handlers: AnthropicMemoryHandlers,
  input: Record<string, unknown>,
): Promise<{ ok: boolean; text: string }> {
  const tool = betaMemoryTool(handlers as never);
  try {
    return { ok: true, text: String(await tool.run(tool.parse(input as never))) };
  } catch (e) {
    return { ok: false, text: (e as Error).message };
  }
}

Deno.test("str_replace replaces a multi-line old_str that occurs once, where the SDK's TypeScript tool refuses it", async () => {
  await withDir(async (dir) => {
    const store = await openFileStore({ dir: `${dir}/store` });
    const memory = anthropicMemoryHandlers(store, { scope: new Scope() });
    const sdk = await BetaLocalFilesystemMemoryTool.init(`${dir}/sdk`);
    const create = { command: "create", path: "/memories/a.md", file_text: "line one\nline two\n" };
    const edit = {
      command: "str_replace",
      path: "/memories/a.md",
      old_str: "line one\nline two",
      new_str: "lines one and two",
    };
    assert.equal((await viaSdk(memory, create)).ok, true);
    await sdk.create(create as never);
    const ours = await viaSdk(memory, edit);
    assert.equal(ours.ok, true, ours.text);
    assert.equal((await store.read("a")).content, "lines one and two\n");
    // The difference we make on purpose (anthropic-sdk-typescript issue 1180).
    await assert.rejects(sdk.str_replace(edit as never), /did not appear verbatim/);
  });
});

Deno.test("str_replace with new_str omitted deletes old_str; null does too", async () => {
  await withDir(async (dir) => {
    const store = await openFileStore({ dir });
    const memory = anthropicMemoryHandlers(store, { scope: new Scope() });
    await viaSdk(memory, {
      command: "create",
      path: "/memories/a.md",
      file_text: "keep drop keep",
    });
    const r = await viaSdk(memory, {
      command: "str_replace",
      path: "/memories/a.md",
      old_str: " drop",
    });
    assert.equal(r.ok, true, r.text);
    assert.equal((await store.read("a")).content, "keep keep");
    await memory.str_replace({
      command: "str_replace",
      path: "/memories/a.md",
      old_str: " keep",
      new_str: null,
    });
    assert.equal((await store.read("a")).content, "keep");
    const bad = await viaSdk(memory, {
      command: "str_replace",
      path: "/memories/a.md",
      old_str: "keep",
      new_str: 7,
    });
    assert.equal(bad.ok, false);
    assert.match(bad.text, /new_str must be a string/);
    assert.equal((await store.read("a")).content, "keep");
  });
});

Deno.test("str_replace counts old_str in the whole text: twice on one line is refused, naming the line", async () => {
  await withDir(async (dir) => {
    const store = await openFileStore({ dir });
    const memory = anthropicMemoryHandlers(store, { scope: new Scope() });
    await memory.create({ command: "create", path: "/memories/a.md", file_text: "x\nab ab\nc" });
    const r = await viaSdk(memory, {
      command: "str_replace",
      path: "/memories/a.md",
      old_str: "ab",
      new_str: "z",
    });
    assert.equal(r.ok, false);
    assert.match(
      r.text,
      /Multiple occurrences of old_str "ab" in lines: 2\. Please ensure it is unique/,
    );
    // Non-overlapping, as Python's str.count: "aa" occurs once in "aaa".
    await memory.create({ command: "create", path: "/memories/b.md", file_text: "aaa" });
    await memory.str_replace({
      command: "str_replace",
      path: "/memories/b.md",
      old_str: "aa",
      new_str: "b",
    });
    assert.equal((await store.read("b")).content, "ba");
    assert.equal((await store.read("a")).content, "x\nab ab\nc");
  });
});

const EDITS = 20;

function slots(agents: readonly string[], n: number): string {
  return [
    "# Shared",
    ...agents.flatMap((a) => Array.from({ length: n }, (_, i) => `${a}-${i}: todo`)),
  ]
    .join("\n");
}

function lostEdits(content: string): string[] {
  return content.split("\n").filter((line) => line.endsWith(": todo"));
}

// With history on (the default: the versioned writer) and off (the plain one).
for (const history of [true, false]) {
  Deno.test(`two agents' str_replace edits of one memory on a default file store (no readBeforeUpdate, history ${history}) lose nothing, in one process`, async () => {
    await withDir(async (dir) => {
      const agents = ["a", "b"];
      const opened = await Promise.all(
        agents.map(async () => countingStale(await openFileStore({ dir, history }))),
      );
      await opened[0]!.store.create("shared", "Shared", slots(agents, EDITS));
      await Promise.all(agents.map(async (agent, n) => {
        const memory = anthropicMemoryHandlers(opened[n]!.store, { scope: new Scope() });
        for (let i = 0; i < EDITS; i++) {
          await memory.str_replace({
            command: "str_replace",
            path: "/memories/shared.md",
            old_str: `${agent}-${i}: todo`,
            new_str: `${agent}-${i}: done`,
          });
        }
      }));
      const { content } = await (await openFileStore({ dir })).read("shared");
      assert.deepEqual(lostEdits(content), [], content);
      assert.ok(opened.some((o) => o.stale() > 0), "the agents never collided");
    });
  });
}

Deno.test({
  name:
    "two agents' str_replace edits of one memory on a default file store lose nothing, across two processes",
  fn: async () => {
    await withDir(async (dir) => {
      const agents = ["p", "q"];
      const edits = 25;
      await (await openFileStore({ dir })).create("shared", "Shared", slots(agents, edits));
      const worker = new URL("./_edit_worker.ts", import.meta.url).pathname;
      const startAt = Date.now() + 2_000;
      const runs = agents.map((agent) =>
        spawnDeno(worker, [dir, agent, String(edits), String(startAt)], { timeLimitMs: 60_000 })
      );
      let stale = 0;
      for (const run of runs) {
        await using child = run;
        await child.succeeded();
        stale += (await child.waitFor((r) => typeof r.stale === "number")).stale as number;
      }
      const { content } = await (await openFileStore({ dir })).read("shared");
      assert.deepEqual(lostEdits(content), [], content);
      console.log(`stale retries across the two processes: ${stale}`);
    });
  },
});

Deno.test("a rename racing a str_replace loses nothing: the edit is in the file that remains, or it failed", async () => {
  await withDir(async (dir) => {
    const stores: [Store, Store] = [await openFileStore({ dir }), await openFileStore({ dir })];
    const { bothOk, renameStale } = await renameRaces(stores, 40);
    console.log(
      `rename + edit both succeeded in ${bothOk} of 40 trials; rename stale in ${renameStale}`,
    );
  });
});
