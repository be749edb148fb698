// Bad input against a real file store: every method refuses illegal keys, and writes refuse bad
// descriptions and bodies, with typed errors and without touching the disk. The directory, its
// parent and everything planted in them are compared byte for byte before and after.

import assert from "node:assert/strict";
import {
  InvalidContentError,
  InvalidDescriptionError,
  InvalidKeyError,
  MAX_CONTENT_BYTES,
  MAX_DESCRIPTION_RUNES,
  MAX_KEY_RUNES,
  type MemoryError,
  openFileStore,
  Scope,
  serializeEntry,
  type Store,
  TooLargeError,
} from "../../mod.ts";
import { tempDir } from "../_lib/temp_dir.ts";

const BAD_KEYS: ReadonlyArray<readonly [string, string]> = [
  ["", "an empty key"],
  [".", '"."'],
  ["..", '".."'],
  ["../x", '"../x"'],
  ["../store/keep", "a path back into the store"],
  ["/etc/passwd", "an absolute path"],
  ["a/b", '"a/b"'],
  ["a\\b", '"a\\b"'],
  [".hidden", '".hidden"'],
  ["x.", '"x."'],
  ["a..b", '"a..b"'],
  ["...", '"..."'],
  ["a b", "a space inside"],
  [" a", "a leading space"],
  ["a ", "a trailing space"],
  ["keep\t", "a tab"],
  ["a\nb", "a line feed"],
  ["a\rb", "a carriage return"],
  ["a\u0000b", "NUL"],
  ["a\u0007b", "BEL"],
  ["a\u007fb", "DEL"],
  ["a\u0085b", "NEXT LINE"],
  ["a\u009bb", "a C1 control"],
  ["caf\u00e9", "a non-ASCII letter"],
  ["\u00e9t\u00e9", "only non-ASCII letters"],
  ["\u212aeep", "the Kelvin sign"],
  ["\u0430", "a Cyrillic letter"],
  ["\u{1F600}", "an emoji"],
  ["a\ud800", "a lone surrogate"],
  ["k".repeat(MAX_KEY_RUNES + 1), "a 201-character key"],
  ["\u00e9".repeat(MAX_KEY_RUNES), "200 non-ASCII letters"],
];

// What a careless backend would hit for some of the keys above: files that would be read,
// overwritten or deleted if a key reached the disk unvalidated.
const ENTRY = serializeEntry("planted", "planted body");
const PLANTED_IN_STORE = [
  ".hidden.md",
  "x..md",
  "a..b.md",
  "....md",
  "a b.md",
  " a.md",
  "a\nb.md",
  "a\\b.md",
  "caf\u00e9.md",
  "\u00e9t\u00e9.md",
  "\u{1F600}.md",
  "keep\t.md",
  ".md",
  `${"k".repeat(MAX_KEY_RUNES + 1)}.md`,
];

type Tree = Map<string, string>;

// Every path under `root` (dot files included, symlinks not followed) with its type, mode,
// modification time and, for files, the exact bytes.
async function snapshot(root: string): Promise<Tree> {
  const tree: Tree = new Map();
  const walk = async (path: string, rel: string) => {
    const st = await Deno.lstat(path);
    const meta = `mode=${st.mode} mtime=${st.mtime?.getTime()}`;
    if (st.isSymlink) {
      tree.set(rel, `link -> ${await Deno.readLink(path)} ${meta}`);
    } else if (st.isDirectory) {
      tree.set(rel, `dir ${meta}`);
      const names: string[] = [];
      for await (const entry of Deno.readDir(path)) names.push(entry.name);
      for (const name of names.sort()) await walk(`${path}/${name}`, `${rel}/${name}`);
    } else {
      const bytes = await Deno.readFile(path);
      tree.set(rel, `file ${meta} ${Array.from(bytes, (b) => b.toString(16)).join(",")}`);
    }
  };
  await walk(root, ".");
  return tree;
}

interface Setup {
  readonly outer: string;
  readonly dir: string;
  readonly store: Store;
  readonly scope: Scope;
}

// A store in `<outer>/store` holding "keep", with bait planted in it and in its parent.
async function withStore(fn: (s: Setup) => Promise<void>): Promise<void> {
  await using tmp = await tempDir("agentmem-bad-");
  const outer = tmp.path;
  const dir = `${outer}/store`;
  const store = await openFileStore({ dir });
  await store.create("keep", "kept", "kept body");
  const scope = new Scope();
  await store.read("keep", { scope });
  await Deno.writeTextFile(`${outer}/x.md`, ENTRY);
  await Deno.writeTextFile(`${outer}/keep.md`, ENTRY);
  await Deno.mkdir(`${outer}/etc`);
  await Deno.writeTextFile(`${outer}/etc/passwd.md`, ENTRY);
  for (const name of PLANTED_IN_STORE) await Deno.writeTextFile(`${dir}/${name}`, ENTRY);
  await Deno.mkdir(`${dir}/a`);
  await Deno.writeTextFile(`${dir}/a/b.md`, ENTRY);
  await fn({ outer, dir, store, scope });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return await promise.then(
    (value) => assert.fail(`resolved with ${JSON.stringify(value)}`),
    (e) => e,
  );
}

Deno.test("the directory snapshot sees a write, a removed temp file and a touched file", async () => {
  // The comparison below is only worth something if it can fail.
  await withStore(async ({ outer, dir, store }) => {
    // Times set in the past first: a change within the file system's clock tick (a few ms)
    // would otherwise leave a modification time as it was.
    const past = async () => {
      for (const path of [dir, `${dir}/keep.md`]) await Deno.utime(path, 1_000, 1_000);
    };
    await past();
    const before = await snapshot(outer);
    assert.ok(
      before.has("./store/.hidden.md") && before.has("./x.md") && before.has("./store/a/b.md"),
    );
    await Deno.writeTextFile(`${dir}/.tmp-probe`, "");
    await Deno.remove(`${dir}/.tmp-probe`);
    assert.notDeepEqual(await snapshot(outer), before, "a created and removed file went unseen");
    await past();
    const middle = await snapshot(outer);
    await store.update("keep", "kept", "kept body");
    assert.notDeepEqual(await snapshot(outer), middle, "a rewrite with the same bytes went unseen");
  });
});

for (const [key, what] of BAD_KEYS) {
  Deno.test(`every file store method refuses a key with ${what} and touches nothing`, async () => {
    await withStore(async ({ outer, store, scope }) => {
      const before = await snapshot(outer);
      const scopeBefore = scope.snapshot();
      const calls: Array<[string, () => Promise<unknown>]> = [
        ["read", () => store.read(key)],
        ["read with a scope", () => store.read(key, { scope })],
        ["create", () => store.create(key, "d", "c")],
        ["create with a bad description", () => store.create(key, "\u0000", "c")],
        ["update", () => store.update(key, "d", "c")],
        ["update with a scope", () => store.update(key, "d", "c", { scope })],
        ["delete", () => store.delete(key)],
        ["delete with a scope", () => store.delete(key, { scope })],
      ];
      for (const [name, call] of calls) {
        const e = await rejection(call());
        assert.ok(e instanceof InvalidKeyError, `${name}: threw ${e}`);
        assert.equal(e.code, "invalid_key");
        assert.equal(e.key, key);
        assert.ok(!e.message.includes(outer), `${name}: the message holds a host path`);
      }
      assert.deepEqual(await snapshot(outer), before);
      assert.deepEqual(scope.snapshot(), scopeBefore);
      assert.deepEqual(await store.list(), [{ key: "keep", description: "kept" }]);
      assert.deepEqual(await store.read("keep"), { description: "kept", content: "kept body" });
    });
  });
}

Deno.test("every file store method refuses a key that is not a string", async () => {
  await withStore(async ({ outer, store }) => {
    const before = await snapshot(outer);
    for (const key of [undefined, null, 42, ["keep"], { toString: () => "keep" }]) {
      const k = key as unknown as string;
      for (
        const call of [
          () => store.read(k),
          () => store.create(k, "d", "c"),
          () => store.update(k, "d", "c"),
          () => store.delete(k),
        ]
      ) {
        assert.ok((await rejection(call())) instanceof InvalidKeyError);
      }
    }
    assert.deepEqual(await snapshot(outer), before);
  });
});

const BAD_WRITES: ReadonlyArray<
  readonly [string, unknown, unknown, new (...a: never[]) => MemoryError]
> = [
  [
    "a description of 501 characters",
    "x".repeat(MAX_DESCRIPTION_RUNES + 1),
    "c",
    InvalidDescriptionError,
  ],
  [
    "a description of 501 emoji",
    "\u{1F600}".repeat(MAX_DESCRIPTION_RUNES + 1),
    "c",
    InvalidDescriptionError,
  ],
  ["a description with NUL", "a\u0000b", "c", InvalidDescriptionError],
  ["a description with BEL", "ding\u0007", "c", InvalidDescriptionError],
  ["a description with an escape sequence", "\u001b[31mred", "c", InvalidDescriptionError],
  ["a description with DEL", "a\u007f", "c", InvalidDescriptionError],
  ["a description with a C1 control", "\u009b2J", "c", InvalidDescriptionError],
  ["a description with a lone high surrogate", "a\ud800", "c", InvalidDescriptionError],
  ["a description with a lone low surrogate", "\udc00b", "c", InvalidDescriptionError],
  ["a description that is not a string", 42, "c", InvalidDescriptionError],
  ["content of 65,537 ASCII bytes", "d", "x".repeat(MAX_CONTENT_BYTES + 1), TooLargeError],
  [
    "content of 65,537 bytes ending in a 2-byte letter",
    "d",
    "x".repeat(MAX_CONTENT_BYTES - 1) + "\u00e9",
    TooLargeError,
  ],
  [
    "content of 65,540 bytes of emoji",
    "d",
    "\u{1F600}".repeat(MAX_CONTENT_BYTES / 4 + 1),
    TooLargeError,
  ],
  ["content of 1 MiB", "d", "x".repeat(1 << 20), TooLargeError],
  ["content with a lone high surrogate", "d", "body \ud83d", InvalidContentError],
  ["content with a lone low surrogate", "d", "\ude00 body", InvalidContentError],
  ["content that is not a string", "d", new TextEncoder().encode("c"), InvalidContentError],
];

for (const [what, description, content, type] of BAD_WRITES) {
  Deno.test(`create() and update() refuse ${what} with ${type.name} and write nothing`, async () => {
    await withStore(async ({ outer, store, scope }) => {
      const before = await snapshot(outer);
      const d = description as string;
      const c = content as string;
      const calls: Array<[string, () => Promise<unknown>]> = [
        ["create of a new key", () => store.create("new", d, c)],
        ["create of an existing key", () => store.create("keep", d, c)],
        ["update of the existing key", () => store.update("keep", d, c, { scope })],
        ["update of a new key", () => store.update("new", d, c)],
      ];
      for (const [name, call] of calls) {
        const e = await rejection(call());
        assert.ok(e instanceof type, `${name}: threw ${e}, expected ${type.name}`);
        assert.ok(!e.message.includes(outer), `${name}: the message holds a host path`);
      }
      assert.deepEqual(await snapshot(outer), before);
      assert.deepEqual(await store.list(), [{ key: "keep", description: "kept" }]);
      assert.deepEqual(await store.read("keep"), { description: "kept", content: "kept body" });
    });
  });
}

Deno.test("a file store takes a write right at the limits", async () => {
  // The other side of the boundaries refused above.
  await withStore(async ({ store }) => {
    const cases: Array<[string, string]> = [
      ["x".repeat(MAX_DESCRIPTION_RUNES), "x".repeat(MAX_CONTENT_BYTES)],
      ["\u{1F600}".repeat(MAX_DESCRIPTION_RUNES), "x".repeat(MAX_CONTENT_BYTES - 2) + "\u00e9"],
      [` ${"y".repeat(MAX_DESCRIPTION_RUNES)}\n`, "\u{1F600}".repeat(MAX_CONTENT_BYTES / 4)],
    ];
    const key = "k".repeat(MAX_KEY_RUNES);
    for (const [description, content] of cases) {
      await store.update(key, description, content);
      assert.deepEqual(await store.read(key), { description: description.trim(), content });
    }
    assert.equal(await store.delete(key), true);
  });
});
