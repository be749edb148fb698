// The contract every backend must keep. Each backend's test file calls `conformance()` with a
// factory for a fresh, empty store, and adds only the cases peculiar to it.

import assert from "node:assert/strict";
import {
  CapacityError,
  CorruptError,
  ExistsError,
  history,
  InvalidContentError,
  InvalidDescriptionError,
  InvalidKeyError,
  MAX_CONTENT_BYTES,
  MAX_DESCRIPTION_RUNES,
  MAX_ENTRIES,
  MAX_KEY_RUNES,
  type MemoryError,
  NotFoundError,
  restoreVersion,
  Scope,
  StaleError,
  type Store,
  TooLargeError,
  UnavailableError,
} from "../mod.ts";
import { test as registerTest, type TestOptions } from "./_lib/test_api.ts";
import { historyConformance } from "./conformance_history.ts";
import { trustConformance } from "./conformance_trust.ts";
import { gateConformance } from "./conformance_gate.ts";
import { reviewConformance } from "./conformance_review.ts";
import { redactConformance } from "./conformance_redact.ts";
import { redactSidecarConformance } from "./conformance_redact_sidecar.ts";

import type { Fixture, ReopenOptions } from "./_lib/fixture.ts";

export type { Fixture, ReopenOptions };

/** What the suite needs to know about a backend. */
export interface ConformanceOptions {
  /** The name `info().backend` must report. */
  readonly backend: string;
  /** Whether `update` without a prior `read` in the scope is refused with `StaleError`. */
  readonly enforcesReadBeforeUpdate: boolean;
  /** Opens a fresh, empty store. */
  readonly open: () => Promise<Fixture>;
  /** Told apart in test names when one backend runs the suite twice (`file+rbu`, say). */
  readonly label?: string;
  /** Options passed to every test (to skip when a server is missing, say); see _lib/test_api.ts. */
  readonly testOptions?: TestOptions;
  /** Whether the store keeps history (default `true`): the history cases run when it does. */
  readonly history?: boolean;
}

export const BAD_KEYS: readonly string[] = [
  "",
  ".",
  "..",
  "../x",
  "a/b",
  "a\\b",
  ".hidden",
  "x.",
  "a..b",
  "a b",
  " a",
  "a\u0000b",
  "a\nb",
  "\u00e9t\u00e9",
  "caf\u00e9",
  "\u{1F600}",
  "k".repeat(MAX_KEY_RUNES + 1),
  "a*b",
  "a>b",
  "a:b",
];

const WORST_DESCRIPTION = "\u{1F600}".repeat(MAX_DESCRIPTION_RUNES);
const MAX_CONTENT = "x".repeat(MAX_CONTENT_BYTES - 4) + "\u{1F600}";

/** Registers the contract cases for one backend. */
export function conformance(options: ConformanceOptions): void {
  const { backend, enforcesReadBeforeUpdate } = options;
  const test = (name: string, fn: (f: Fixture) => Promise<void>) =>
    registerTest({
      name: `[${options.label ?? backend}] ${name}`,
      sanitizeResources: false,
      sanitizeOps: false,
      ...options.testOptions,
      fn: async () => {
        const fixture = await options.open();
        try {
          await fn({ ...fixture, enforcesReadBeforeUpdate });
        } finally {
          await fixture.cleanup();
        }
      },
    });

  // Writes one entry, authorized for overwrite in `scope` where the backend enforces it.
  const readScope = async (store: Store, key: string) => {
    const scope = new Scope();
    await store.read(key, { scope });
    return scope;
  };

  test("info() reports the backend and a location that is no path or URL", ({ store }) => {
    const info = store.info();
    assert.equal(info.backend, backend);
    assert.equal(typeof info.location, "string");
    assert.ok(!info.location.startsWith("/"), "location must not be a path");
    assert.ok(!/:\/\/[^/]*@/.test(info.location), "location must not carry userinfo");
    return Promise.resolve();
  });

  test("list() of an empty store is empty", async ({ store }) => {
    assert.deepEqual(await store.list(), []);
  });

  test("create() then read() returns the entry, with the description normalized", async ({ store }) => {
    await store.create("a", "  first\n\tnote  ", "body\n");
    assert.deepEqual(await store.read("a"), { description: "first note", content: "body\n" });
  });

  test("create() refuses a key that already exists and keeps the original", async ({ store }) => {
    await store.create("dup", "original", "one");
    await assert.rejects(store.create("dup", "second", "two"), ExistsError);
    assert.deepEqual(await store.read("dup"), { description: "original", content: "one" });
  });

  test("read() of a missing key fails with NotFoundError", async ({ store }) => {
    const err = await store.read("missing").then(() => undefined, (e) => e);
    assert.ok(err instanceof NotFoundError);
    assert.equal(err.code, "not_found");
    assert.match(err.message, /missing/);
  });

  test("list() returns every key with its description, sorted, without bodies", async ({ store }) => {
    await store.create("b", "second", "B".repeat(1000));
    await store.create("a", "first", "A");
    await store.create("c.d=e_f-g", 'with: "yaml" - chars', "C");
    assert.deepEqual(await store.list(), [
      { key: "a", description: "first" },
      { key: "b", description: "second" },
      { key: "c.d=e_f-g", description: 'with: "yaml" - chars' },
    ]);
  });

  test("update() after read() replaces the entry", async ({ store }) => {
    await store.create("u", "old", "old body");
    const scope = await readScope(store, "u");
    await store.update("u", "new", "new body", { scope });
    assert.deepEqual(await store.read("u"), { description: "new", content: "new body" });
  });

  test("update() after create() in the same scope replaces the entry", async ({ store }) => {
    const scope = new Scope();
    await store.create("u", "old", "old body", { scope });
    await store.update("u", "new", "new body", { scope });
    await store.update("u", "newer", "newer body", { scope });
    assert.deepEqual(await store.read("u"), { description: "newer", content: "newer body" });
  });

  if (enforcesReadBeforeUpdate) {
    test("update() of a key this scope never read fails with StaleError and writes nothing", async ({ store }) => {
      await store.create("r", "kept", "kept");
      await assert.rejects(store.update("r", "x", "x"), StaleError);
      await assert.rejects(store.update("r", "x", "x", { scope: null }), StaleError);
      await assert.rejects(store.update("r", "x", "x", { scope: new Scope() }), StaleError);
      await assert.rejects(store.update("fresh", "x", "x", { scope: new Scope() }), StaleError);
      assert.deepEqual(await store.read("r"), { description: "kept", content: "kept" });
      await assert.rejects(store.read("fresh"), NotFoundError);
    });

    test("update() after someone else's write fails with StaleError", async ({ store, peer }) => {
      await store.create("s", "v1", "v1");
      const mine = await readScope(store, "s");
      const other = await peer();
      const theirs = await readScope(other, "s");
      await other.update("s", "v2", "v2", { scope: theirs });
      await assert.rejects(store.update("s", "v3", "v3", { scope: mine }), StaleError);
      assert.deepEqual(await store.read("s"), { description: "v2", content: "v2" });
    });

    test("list() grants no authority to overwrite", async ({ store }) => {
      await store.create("l", "listed", "body");
      const scope = new Scope();
      await store.list({ scope });
      await assert.rejects(store.update("l", "x", "x", { scope }), StaleError);
    });

    test("delete() drops the revision, so it cannot authorize a re-created key", async ({ store, peer }) => {
      await store.create("d", "v1", "v1");
      const scope = await readScope(store, "d");
      assert.equal(await store.delete("d", { scope }), true);
      const other = await peer();
      await other.create("d", "theirs", "theirs");
      await assert.rejects(store.update("d", "mine", "mine", { scope }), StaleError);
      assert.equal((await store.read("d")).content, "theirs");
    });

    test("a scope restored from its JSON snapshot authorizes what it read, nothing else", async ({ store, peer }) => {
      await store.create("j", "v1", "v1");
      await store.create("other", "v1", "v1");
      const json = JSON.stringify((await readScope(store, "j")).snapshot());
      const resumed = Scope.restore(JSON.parse(json));
      await assert.rejects(store.update("other", "x", "x", { scope: resumed }), StaleError);
      await (await peer()).update("j", "v2", "v2", { scope: resumed });
      assert.equal((await store.read("j")).content, "v2");
      // The write recorded the new revision, so the same run may go on writing.
      await store.update("j", "v3", "v3", { scope: resumed });
      assert.equal((await store.read("j")).content, "v3");
    });

    test("updates racing from one read: exactly one wins, the others are stale", async ({ store, peer }) => {
      await store.create("race", "v0", "v0");
      const stores = [store, await peer(), await peer(), await peer()];
      const scopes = await Promise.all(stores.map((s) => readScope(s, "race")));
      const results = await Promise.allSettled(
        stores.map((s, i) => s.update("race", `by ${i}`, `by ${i}`, { scope: scopes[i] })),
      );
      const won = results.flatMap((r, i) => r.status === "fulfilled" ? [i] : []);
      assert.equal(won.length, 1);
      for (const r of results) {
        if (r.status === "rejected") assert.ok(r.reason instanceof StaleError, String(r.reason));
      }
      assert.equal((await store.read("race")).content, `by ${won[0]}`);
    });
  } else {
    test("update() of a missing key creates it (no read-before-update)", async ({ store }) => {
      await store.update("new", "created by update", "body");
      assert.deepEqual(await store.read("new"), {
        description: "created by update",
        content: "body",
      });
    });

    test("update() without a scope replaces (no read-before-update)", async ({ store }) => {
      await store.create("r", "old", "old");
      await store.update("r", "new", "new");
      assert.deepEqual(await store.read("r"), { description: "new", content: "new" });
    });
  }

  test("list() shows an entry whose header parses but whose body does not; read() says corrupt", async ({ store, plant }) => {
    const header = new TextEncoder().encode("---\ndescription: damaged body\n---\n");
    await plant("bad-body", new Uint8Array([...header, 0xff, 0xfe, 0x41]));
    await plant("bad-header", new TextEncoder().encode("no header at all"));
    await store.create("good", "fine", "fine");
    assert.deepEqual(await store.list(), [
      { key: "bad-body", description: "damaged body" },
      { key: "good", description: "fine" },
    ]);
    await assert.rejects(store.read("bad-body"), CorruptError);
    await assert.rejects(store.read("bad-header"), CorruptError);
    // Still entries: they can be neither created over nor hidden from delete.
    await assert.rejects(store.create("bad-body", "d", "c"), ExistsError);
    assert.equal(await store.delete("bad-body"), true);
  });

  test("delete() reports whether the key existed", async ({ store }) => {
    await store.create("gone", "d", "c");
    assert.equal(await store.delete("gone"), true);
    assert.equal(await store.delete("gone"), false);
    assert.equal(await store.delete("never"), false);
    await assert.rejects(store.read("gone"), NotFoundError);
    assert.deepEqual(await store.list(), []);
  });

  test("create() after delete() succeeds", async ({ store }) => {
    await store.create("again", "one", "1");
    await store.delete("again");
    await store.create("again", "two", "2");
    assert.deepEqual(await store.read("again"), { description: "two", content: "2" });
  });

  test("every method refuses illegal keys with InvalidKeyError and changes nothing", async ({ store }) => {
    await store.create("keep", "kept", "kept");
    const scope = await readScope(store, "keep");
    for (const key of BAD_KEYS) {
      const calls: Array<[string, () => Promise<unknown>]> = [
        ["read", () => store.read(key, { scope })],
        ["create", () => store.create(key, "d", "c", { scope })],
        ["update", () => store.update(key, "d", "c", { scope })],
        ["delete", () => store.delete(key, { scope })],
      ];
      for (const [name, call] of calls) {
        const err = await call().then(() => undefined, (e) => e);
        assert.ok(
          err instanceof InvalidKeyError,
          `${name}(${JSON.stringify(key)}) must throw InvalidKeyError`,
        );
        assert.equal(err.code, "invalid_key");
      }
    }
    for (const key of [42, null, undefined, {}, ["a"]]) {
      await assert.rejects(store.read(key as unknown as string), InvalidKeyError);
      await assert.rejects(store.create(key as unknown as string, "d", "c"), InvalidKeyError);
    }
    assert.deepEqual(await store.list(), [{ key: "keep", description: "kept" }]);
    assert.deepEqual(await store.read("keep"), { description: "kept", content: "kept" });
  });

  test("create() and update() refuse bad descriptions and bodies with typed errors, writing nothing", async ({ store }) => {
    await store.create("keep", "kept", "kept");
    const scope = await readScope(store, "keep");
    const cases: Array<[string, string, new (...a: never[]) => MemoryError]> = [
      ["x".repeat(MAX_DESCRIPTION_RUNES + 1), "c", InvalidDescriptionError],
      ["\u{1F600}".repeat(MAX_DESCRIPTION_RUNES + 1), "c", InvalidDescriptionError],
      ["bell\u0007", "c", InvalidDescriptionError],
      ["esc\u001b[31m", "c", InvalidDescriptionError],
      ["c1\u009b", "c", InvalidDescriptionError],
      ["lone \ud800", "c", InvalidDescriptionError],
      ["ok", "x".repeat(MAX_CONTENT_BYTES + 1), TooLargeError],
      ["ok", "\u00e9".repeat(MAX_CONTENT_BYTES / 2 + 1), TooLargeError],
      ["ok", "lone \udc00 surrogate", InvalidContentError],
    ];
    for (const [description, content, type] of cases) {
      await assert.rejects(store.create("new", description, content, { scope }), type);
      await assert.rejects(store.update("keep", description, content, { scope }), type);
    }
    assert.deepEqual(await store.list(), [{ key: "keep", description: "kept" }]);
    assert.deepEqual(await store.read("keep"), { description: "kept", content: "kept" });
  });

  test("the largest valid entry round-trips through create() and update()", async ({ store }) => {
    const scope = new Scope();
    await store.create("big", WORST_DESCRIPTION, MAX_CONTENT, { scope });
    assert.deepEqual(await store.read("big", { scope }), {
      description: WORST_DESCRIPTION,
      content: MAX_CONTENT,
    });
    const description = '"\\'.repeat(MAX_DESCRIPTION_RUNES / 2);
    await store.update("big", description, MAX_CONTENT, { scope });
    assert.deepEqual(await store.read("big"), { description, content: MAX_CONTENT });
  });

  test("bodies round-trip byte for byte", async ({ store }) => {
    const bodies = [
      "",
      "---\ndescription: forged\n---\n",
      "\r\n\r\n",
      "\uFEFFbom first",
      "nul\u0000inside",
      "\u2028\u2029",
      "emoji \u{1F600} and \u{10FFFF}",
      "no trailing newline",
    ];
    const scope = new Scope();
    for (const [i, body] of bodies.entries()) {
      await store.create(`b${i}`, "body test", body, { scope });
      assert.equal((await store.read(`b${i}`)).content, body);
    }
  });

  test("an aborted signal fails with UnavailableError and writes nothing", async ({ store }) => {
    const signal = AbortSignal.abort();
    await assert.rejects(store.create("a", "d", "c", { signal }), UnavailableError);
    await assert.rejects(store.list({ signal }), UnavailableError);
    await assert.rejects(store.read("a", { signal }), UnavailableError);
    assert.deepEqual(await store.list(), []);
  });

  test("concurrent create() of one key has exactly one winner", async ({ store, peer }) => {
    const other = await peer();
    const results = await Promise.allSettled(
      Array.from(
        { length: 8 },
        (_, i) => (i % 2 ? other : store).create("race", `writer ${i}`, `${i}`),
      ),
    );
    const won = results.filter((r) => r.status === "fulfilled");
    assert.equal(won.length, 1);
    for (const r of results) {
      if (r.status === "rejected") assert.ok(r.reason instanceof ExistsError);
    }
  });

  test("concurrent delete() of one key reports existed exactly once", async ({ store, peer }) => {
    await store.create("del", "d", "c");
    const other = await peer();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? other : store).delete("del")),
    );
    assert.equal(results.filter(Boolean).length, 1);
  });

  test(`create() beyond ${MAX_ENTRIES} entries fails with CapacityError; overwrites still work`, async ({ store }) => {
    const scope = new Scope();
    for (let i = 0; i < MAX_ENTRIES; i += 64) {
      await Promise.all(
        Array.from({ length: 64 }, (_, j) => store.create(`k${i + j}`, "filler", "", { scope })),
      );
    }
    const err = await store.create("one-too-many", "d", "c", { scope }).then(
      () => undefined,
      (e) => e,
    );
    assert.ok(err instanceof CapacityError);
    assert.equal(err.code, "capacity");
    // A key the full store holds still answers "exists", the answer a caller can act on.
    await assert.rejects(store.create("k2", "d", "c", { scope }), ExistsError);
    await store.update("k0", "replaced", "still fits", { scope });
    assert.equal((await store.read("k0")).description, "replaced");
    assert.equal((await store.list()).length, MAX_ENTRIES);
    await store.delete("k1", { scope });
    await store.create("one-too-many", "now fits", "c", { scope });
    if (options.history === false) return;
    // Versions never count, and bringing a deleted key back is a create: capacity applies.
    await store.delete("k3", { scope });
    await store.create("k3-successor", "fills the slot", "c", { scope });
    const [, created] = await history(store, "k3");
    await assert.rejects(restoreVersion(store, "k3", created!.revision), CapacityError);
    assert.equal((await store.list()).length, MAX_ENTRIES);
  });

  gateConformance(test, { history: options.history !== false });
  if (options.history !== false) {
    historyConformance(test);
    trustConformance(test);
    reviewConformance((name, fn) =>
      test(name, (f) => f.reopen === undefined ? Promise.resolve() : fn(f))
    );
    const raw = (name: string, fn: (f: Fixture) => Promise<void>) =>
      test(name, (f) => f.rawHits === undefined ? Promise.resolve() : fn(f));
    redactConformance(raw);
    redactSidecarConformance(raw);
  }
}
