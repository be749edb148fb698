// memory_list at scale: prefix, after, a bounded result and paging; and the options and arguments
// that came with it (null for an omitted optional field, a store whose info() throws).

import assert from "node:assert/strict";
import fc from "fast-check";
import {
  ConfigError,
  DEFAULT_LIST_CHARS,
  MAX_DESCRIPTION_RUNES,
  MAX_ENTRIES,
  memoryTools,
  type Store,
  type Tool,
} from "../../mod.ts";
import { assertFramed, blocksOf } from "./_helpers.ts";
import { FakeStore } from "../_lib/fake_store.ts";

function listOf(store: Store, listMaxChars?: number): Tool {
  const tools = memoryTools(store, listMaxChars === undefined ? {} : { listMaxChars });
  return tools.find((t) => t.name === "memory_list")!;
}

// The keys a page shows, read back from its index lines.
function keysShown(text: string): string[] {
  return blocksOf(text).flatMap((b) => b.lines).map((line) => {
    const m = /^- ("(?:[^"\\]|\\.)*"): /.exec(line);
    assert.ok(m, `not an index line: ${line}`);
    return JSON.parse(m[1]!) as string;
  });
}

// The arguments a cut page says to continue with, or undefined on the last page.
function continuation(text: string): Record<string, string> | undefined {
  const m = /call memory_list with (\{[^\n]*\})\. Use memory_read/.exec(text);
  return m === null ? undefined : JSON.parse(m[1]!);
}

// Pages through the list from `first`, checking each page, and returns every key seen in order.
async function pageThrough(
  list: Tool,
  first: Record<string, string>,
  maxChars: number,
): Promise<{ keys: string[]; pages: number }> {
  const keys: string[] = [];
  let args: Record<string, string> | undefined = first;
  let pages = 0;
  while (args !== undefined) {
    const r = await list.run(args);
    assert.equal(r.isError, false, r.content);
    assert.ok(r.content.length <= maxChars, `a page of ${r.content.length} > ${maxChars}`);
    assertFramed(r.content);
    const shown = keysShown(r.content);
    assert.ok(shown.length > 0 || pages === 0, "a page made no progress");
    keys.push(...shown);
    const next = continuation(r.content);
    if (next !== undefined) {
      const left = Number(/\n(\d+) more memor/.exec(r.content)?.[1]);
      assert.ok(left > 0);
      assert.equal(next.after, shown.at(-1), "after is the page's last key");
      if (first.prefix !== undefined) assert.equal(next.prefix, first.prefix);
    }
    args = next;
    pages++;
    assert.ok(pages <= MAX_ENTRIES, "paging never ends");
  }
  return { keys, pages };
}

function fullStore(description: (i: number) => string): FakeStore {
  const store = new FakeStore();
  for (let i = 0; i < MAX_ENTRIES; i++) {
    store.seed(`note.${String(i).padStart(4, "0")}`, description(i), "");
  }
  return store;
}

Deno.test("memory_list pages a full store of long descriptions within 16,000 characters, every key once", async () => {
  const store = fullStore((i) => `${i} `.padEnd(MAX_DESCRIPTION_RUNES, "long description "));
  const everything = (await store.list()).map((i) => i.key);
  const list = listOf(store);
  const first = await list.run({});
  assert.ok(first.content.length <= DEFAULT_LIST_CHARS);
  assert.match(first.content, /^The first \d+ of 1024 memories \(keys and descriptions\):\n/);
  assert.match(first.content, /\n\d+ more memories match; to see them, call memory_list with /);
  const { keys, pages } = await pageThrough(list, {}, DEFAULT_LIST_CHARS);
  assert.deepEqual(keys, everything);
  assert.ok(pages >= 30, `${pages} pages`);
  // A whole store without a budget would have been about half a million characters.
  const whole = everything.length * MAX_DESCRIPTION_RUNES;
  assert.ok(whole > 500_000);
});

Deno.test("memory_list keeps the old one-page answer when everything fits", async () => {
  const store = new FakeStore();
  store.seed("b", "Second", "");
  store.seed("a", "First", "");
  const r = await listOf(store).run({});
  assert.match(r.content, /^2 memories are saved \(keys and descriptions\):\nBEGIN MEMORY INDEX/);
  assert.deepEqual(keysShown(r.content), ["a", "b"]);
  assert.match(r.content, /\nUse memory_read to read one\.$/);
});

Deno.test("memory_list with prefix and after lists only the keys asked for", async () => {
  const store = new FakeStore();
  for (const k of ["user.name", "user.units", "user", "project.x", "users.z"]) store.seed(k, k, "");
  const list = listOf(store);
  assert.deepEqual(keysShown((await list.run({ prefix: "user." })).content), [
    "user.name",
    "user.units",
  ]);
  assert.deepEqual(keysShown((await list.run({ after: "user" })).content), [
    "user.name",
    "user.units",
    "users.z",
  ]);
  assert.deepEqual(keysShown((await list.run({ prefix: "user.", after: "user.name" })).content), [
    "user.units",
  ]);
  const none = await list.run({ prefix: "zzz" });
  assert.equal(none.isError, false);
  assert.match(none.content, /^No memory keys start with "zzz"\. 5 memories are saved in all/);
  const past = await list.run({ prefix: "user.", after: "user.units" });
  assert.match(past.content, /start with "user\." and sort after "user\.units"/);
  // A huge argument is echoed shortened, never whole.
  const huge = await list.run({ prefix: "q".repeat(100_000) });
  assert.ok(huge.content.length < 500);
});

Deno.test("memory_list paging visits every matching key exactly once, for any keys and budget", async () => {
  const key = fc.stringMatching(/^[a-c0-9=_-][a-c0-9._=-]{0,12}$/).filter((k) =>
    !k.endsWith(".") && !k.includes("..")
  );
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(key, { maxLength: 300 }),
      fc.integer({ min: 2_000, max: 6_000 }),
      fc.constantFrom("", "a", "b.", "c-", "0"),
      fc.option(key, { nil: undefined }),
      fc.string({ maxLength: MAX_DESCRIPTION_RUNES }),
      async (keys, budget, prefix, after, description) => {
        const store = new FakeStore();
        for (const k of keys) store.seed(k, `${description} ${k}`, "");
        const expected = keys.filter((k) =>
          k.startsWith(prefix) && (after === undefined || k > after)
        )
          .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const first: Record<string, string> = {};
        if (prefix !== "") first.prefix = prefix;
        if (after !== undefined) first.after = after;
        const { keys: seen } = await pageThrough(listOf(store, budget), first, budget);
        assert.deepEqual(seen, keys.length === 0 ? [] : expected);
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("memory_list paging loses and repeats no key while other keys come and go", async () => {
  const store = fullStore((i) => `Description ${i} `.repeat(20));
  const list = listOf(store);
  const seen: string[] = [];
  let args: Record<string, string> | undefined = {};
  let round = 0;
  while (args !== undefined) {
    const r = await list.run(args);
    seen.push(...keysShown(r.content));
    args = continuation(r.content);
    // Between pages another run deletes a key behind the cursor and adds one ahead of it.
    store.entries.delete(`note.${String(round).padStart(4, "0")}`);
    store.seed(`zz.${round++}`, "Added while paging", "");
  }
  assert.equal(new Set(seen).size, seen.length);
  for (let i = 0; i < MAX_ENTRIES; i++) {
    assert.ok(seen.includes(`note.${String(i).padStart(4, "0")}`));
  }
});

Deno.test("memory tools take null for an omitted optional field, as OpenAI strict mode sends it", async () => {
  const store = new FakeStore();
  store.seed("a", "First", "");
  const tools = Object.fromEntries(memoryTools(store).map((t) => [t.name, t]));
  const listed = await tools.memory_list!.run({ prefix: null, after: null });
  assert.deepEqual(keysShown(listed.content), ["a"]);
  const write = await tools.memory_write!.run({
    key: "b",
    description: "Second",
    content: "x",
    overwrite: null,
  });
  assert.equal(write.isError, false, write.content);
  assert.equal(store.entries.get("b")?.content, "x");
  // A required field stays required.
  const refused = await tools.memory_read!.run({ key: null });
  assert.match(refused.content, /field "key" must be a string, got null/);
});

Deno.test("memoryTools() refuses a store whose info() throws, and bad listMaxChars, with ConfigError", () => {
  const store = new FakeStore();
  const broken = Object.assign(Object.create(FakeStore.prototype), store, {
    info: () => {
      throw new TypeError("no info here");
    },
  }) as Store;
  assert.throws(
    () => memoryTools(broken),
    (e) =>
      e instanceof ConfigError &&
      /the store's info\(\) threw TypeError: "no info here"/.test(e.message),
  );
  const odd = Object.assign(Object.create(FakeStore.prototype), store, { info: () => 5 }) as Store;
  assert.throws(() => memoryTools(odd), /info\(\) must return \{ backend, location \}/);
  for (const bad of [1_999, 2_000.5, "16000", NaN]) {
    assert.throws(() => memoryTools(store, { listMaxChars: bad as number }), /"listMaxChars"/);
  }
  assert.equal(memoryTools(store, { listMaxChars: 2_000 }).length, 4);
  const getter = Object.defineProperty({}, "readOnly", {
    enumerable: true,
    get() {
      throw new Error("boom");
    },
  });
  assert.throws(() => memoryTools(store, getter), /reading the options failed/);
  const proxy = new Proxy({}, {
    ownKeys() {
      throw new Error("trap");
    },
  });
  assert.throws(() => memoryTools(store, proxy), ConfigError);
});
