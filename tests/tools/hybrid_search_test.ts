// Hybrid memory_search (memoryTools(store, { search: { embed } })), on both backends: meaning
// found where no word matches, keyword and meaning fused; vectors cached by entry revision in the
// store's sidecar, shared with another process, so a search embeds the query and what changed;
// the sidecar never listed or counted, and emptied of what was deleted; an embedder that fails in
// any way gives keyword ranking and a one-line note, never its error.

import assert from "node:assert/strict";
import { jetstreamManager } from "@nats-io/jetstream";
import {
  auditStore,
  CapacityError,
  ConfigError,
  MAX_ENTRIES,
  memoryTools,
  openFileStore,
  runTool,
  Scope,
  type Store,
} from "../../mod.ts";
import { assertFramed, blocksOf } from "./_helpers.ts";
import { type Fault, TestEmbedder } from "../_lib/embedder.ts";
import { FakeStore } from "../_lib/fake_store.ts";
import { BUCKET, jetstreamTest, natsFixture } from "../_lib/jetstream_fixture.ts";
import { spawnDeno } from "../_lib/spawn.ts";
import { tempDir } from "../_lib/temp_dir.ts";

function keysShown(text: string): string[] {
  return blocksOf(text).flatMap((b) => b.lines).filter((l) => l.startsWith("- "))
    .map((l) => JSON.parse(/^- ("[^"]*")/.exec(l)![1]!));
}

async function seed(store: Store): Promise<void> {
  await store.create("user.car", "What the user drives", "A blue Toyota sedan, bought in 2021.");
  await store.create("user.pet", "The user's dog", "A puppy named Rex.");
  await store.create("user.drink", "Morning drink", "Espresso, no sugar.");
  await store.create("user.units", "Preferred units", "Metric: km and kg.");
}

type Where = { dir: string } | { servers: string; bucket: string };

async function hybrid(open: () => Promise<Store>, where: Where): Promise<void> {
  const store = await open();
  await seed(store);
  const embedder = new TestEmbedder();
  const tools = memoryTools(store, { search: { embed: embedder.embed } });
  const search = async (query: string) => {
    const r = await runTool(tools, "memory_search", { query });
    assertFramed(r.content);
    return r.content;
  };
  // Meaning: no memory holds the word "automobile" or "canine"; keyword search finds nothing.
  const keywordOnly = memoryTools(store, { search: true });
  assert.match(
    (await runTool(keywordOnly, "memory_search", { query: "automobile" })).content,
    /No memory matches/,
  );
  assert.equal(keysShown(await search("automobile"))[0], "user.car");
  assert.equal(embedder.texts, 1 + 4, "the first search embeds the query and every memory");
  assert.deepEqual(embedder.kinds, ["query", "document"]);
  assert.equal(keysShown(await search("canine"))[0], "user.pet");
  assert.equal(embedder.texts, 5 + 1, "a warm cache embeds only the query");
  // Fused: a memory that matches the words and the meaning ranks above one that matches one.
  await store.create("notes.coffee", "Coffee shops", "The latte place near work.");
  const fused = keysShown(await search("espresso latte"));
  assert.equal(embedder.texts, 6 + 1 + 1, "after one write: the query and that memory");
  assert.deepEqual(fused.slice(0, 2).sort(), ["notes.coffee", "user.drink"]);
  // Another process, the same store: the sidecar is shared, so it embeds only its query.
  const child = spawnDeno(new URL("./_search_worker.ts", import.meta.url), [
    JSON.stringify(where),
    "sedan",
  ]);
  await using c = child;
  const done = await c.waitFor("done");
  await c.succeeded();
  assert.equal(done.texts, 1, "another process re-embedded what the sidecar holds");
  assert.equal(keysShown(done.content as string)[0], "user.car");
  // Never listed, never counted: the store shows its five memories and nothing else.
  assert.deepEqual((await store.list()).map((i) => i.key), [
    "notes.coffee",
    "user.car",
    "user.drink",
    "user.pet",
    "user.units",
  ]);
  const audit = await auditStore(store);
  assert.deepEqual(audit.ignored, []);
  // A deleted memory's vector goes with it at the next search, in this process and the sidecar.
  await store.delete("user.pet");
  await search("dog");
  const fresh = new TestEmbedder();
  const again = memoryTools(await open(), { search: { embed: fresh.embed } });
  assert.doesNotMatch(
    (await runTool(again, "memory_search", { query: "puppy" })).content,
    /user\.pet/,
  );
  assert.equal(fresh.texts, 1);
}

Deno.test("[file] hybrid memory_search finds by meaning, caches by revision in the sidecar, shares it across processes", async () => {
  await using dir = await tempDir();
  await hybrid(() => openFileStore({ dir: dir.path }), { dir: dir.path });
  // The sidecar's file no longer holds the deleted memory's key.
  const files = [...Deno.readDirSync(dir.path)].map((e) => e.name)
    .filter((n) => n.startsWith(".sidecar-"));
  assert.equal(files.length, 1, files.join());
  const text = new TextDecoder().decode(Deno.readFileSync(`${dir.path}/${files[0]}`));
  assert.ok(!text.includes("user.pet"));
  assert.ok(text.includes("user.car"));
});

jetstreamTest(
  "hybrid memory_search finds by meaning, caches by revision in the sidecar, shares it across processes",
  async () => {
    await using nats = await natsFixture();
    await hybrid(() => nats.open(), { servers: nats.server.url, bucket: BUCKET });
    // The sidecar's stream no longer holds the deleted memory's vector.
    const jsm = await jetstreamManager(nats.nc);
    const info = await jsm.streams.info(`KVS_${BUCKET}`, { subjects_filter: ">" });
    const subjects = Object.keys(info.state.subjects ?? {});
    assert.ok(subjects.some((s) => s.endsWith(".user.car")), subjects.join());
    assert.ok(!subjects.some((s) => s.endsWith(".user.pet")), subjects.join());
  },
);

const FAULTS: [Fault, RegExp][] = [
  ["throw", /the embedder failed/],
  ["count", /the embedder answered 0 vectors for 1 texts/],
  ["dimension", /the embedder answered vectors of \d+ and \d+ dimensions/],
  ["nan", /holding a value that is not a number/],
  ["hang", /the embedder took longer than 50 ms/],
];

Deno.test("hybrid memory_search falls back to keywords with a one-line note for every embedder fault", async () => {
  await using dir = await tempDir();
  const store = await openFileStore({ dir: dir.path });
  await seed(store);
  for (const [fault, reason] of FAULTS) {
    const embedder = new TestEmbedder();
    embedder.fault = fault;
    const tools = memoryTools(store, { search: { embed: embedder.embed, timeoutMs: 50 } });
    const r = await runTool(tools, "memory_search", { query: "metric units" });
    assert.equal(r.isError, false, fault);
    const [first, ...rest] = r.content.split("\n");
    assert.match(first!, /^Note: ranked by words only this time \(/, fault);
    assert.match(first!, reason, fault);
    assert.doesNotMatch(r.content, /sk-secret|example\.com|429/);
    assert.deepEqual(keysShown(rest.join("\n")), ["user.units"], fault);
    assertFramed(r.content);
  }
  // A search cut short keeps what it embedded: the next one embeds only what is left. In
  // batches of 2, the query then 4 memories: the third call (memories 3 and 4) fails.
  const good = new TestEmbedder();
  let calls = 0;
  const flaky = (texts: string[], o: { signal: AbortSignal; kind: "query" | "document" }) =>
    ++calls === 3 ? Promise.reject(new Error("down")) : good.embed(texts, o);
  const partial = memoryTools(store, { search: { embed: flaky, batch: 2 } });
  assert.match((await runTool(partial, "memory_search", { query: "km" })).content, /^Note: /);
  // Kept in the sidecar: a new handle (as a new process) embeds only what is left.
  const after = new TestEmbedder();
  const again = await openFileStore({ dir: dir.path });
  await runTool(memoryTools(again, { search: { embed: after.embed } }), "memory_search", {
    query: "km",
  });
  assert.equal(after.texts, 1 + 2, "the vectors embedded before the failure were not kept");
});

Deno.test("hybrid memory_search marks a hit a tainted run wrote and taints the run that sees it", async () => {
  await using dir = await tempDir();
  const store = await openFileStore({ dir: dir.path });
  await store.create("web.page", "A page", "Buy a new car today", {
    scope: new Scope({ tainted: true }),
  });
  await store.create("user.car", "Car", "A sedan");
  const scope = new Scope();
  const r = await runTool(
    memoryTools(store, { scope, search: { embed: new TestEmbedder().embed } }),
    "memory_search",
    { query: "automobile" },
  );
  assert.match(r.content, /- "web\.page" \[written by a run that read untrusted input\]/);
  assert.equal(scope.tainted, true);
  const careful = new Scope({ propagateTaint: false });
  await runTool(memoryTools(store, { scope: careful, search: true }), "memory_search", {
    query: "car",
  });
  assert.equal(careful.tainted, false);
});

Deno.test("[file] the sidecar never counts: a full store with vectors holds 1,024 memories", async () => {
  await using dir = await tempDir();
  const store = await openFileStore({ dir: dir.path, history: false });
  for (let i = 0; i < MAX_ENTRIES - 1; i++) await store.create(`k${i}`, "D", `body ${i}`);
  const tools = memoryTools(store, { search: { embed: new TestEmbedder().embed } });
  await runTool(tools, "memory_search", { query: "body" });
  await store.create("last", "D", "x");
  await assert.rejects(store.create("one.more", "D", "x"), CapacityError);
  assert.equal((await store.list()).length, MAX_ENTRIES);
});

Deno.test("[file] a sidecar file planted as a symlink is never followed; search still ranks by meaning", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  const store = await openFileStore({ dir: dir.path });
  await seed(store);
  const embedder = new TestEmbedder();
  const tools = () => memoryTools(store, { search: { embed: embedder.embed } });
  await runTool(tools(), "memory_search", { query: "automobile" });
  const [file] = [...Deno.readDirSync(dir.path)].map((e) => e.name)
    .filter((n) => n.startsWith(".sidecar-"));
  Deno.removeSync(`${dir.path}/${file}`);
  Deno.writeTextFileSync(`${outside.path}/target`, "outside");
  Deno.symlinkSync(`${outside.path}/target`, `${dir.path}/${file}`);
  await store.create("user.van", "Van", "A vehicle for work");
  const r = await runTool(tools(), "memory_search", { query: "automobile" });
  assert.ok(keysShown(r.content).includes("user.van"));
  assert.equal(Deno.readTextFileSync(`${outside.path}/target`), "outside");
  assert.deepEqual([...Deno.readDirSync(outside.path)].map((e) => e.name), ["target"]);
  // The search put a file of its own in the link's place.
  assert.ok(Deno.lstatSync(`${dir.path}/${file}`).isFile);
  const warm = embedder.texts;
  await runTool(tools(), "memory_search", { query: "automobile" });
  assert.equal(embedder.texts, warm + 1);
});

Deno.test("memoryTools({ search: { embed } }) refuses bad hybrid options with ConfigError", () => {
  const store = new FakeStore();
  const embed = new TestEmbedder().embed;
  for (
    const search of [
      {},
      { embed: "x" },
      { embed, model: "" },
      { embed, timeoutMs: 0 },
      { embed, batch: 1.5 },
      { embed, extra: 1 },
    ]
  ) {
    assert.throws(() => memoryTools(store, { search: search as never }), ConfigError);
  }
  assert.equal(
    memoryTools(store, { search: { embed } }).find((t) => t.name === "memory_search")
      ?.description.includes("by meaning"),
    true,
  );
});
