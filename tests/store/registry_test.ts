import assert from "node:assert/strict";
import {
  ConfigError,
  decodeOptions,
  isReadOnly,
  openFileStore,
  openStore,
  ReadOnlyError,
  registerBackend,
  registeredBackends,
  type Store,
  type StoreDeps,
} from "../../mod.ts";
import { FakeStore } from "../_lib/fake_store.ts";
import { tempDir } from "../_lib/temp_dir.ts";

const TEST_OPTIONS = {
  url: { type: "string", required: true },
  retries: { type: "number" },
  verbose: { type: "boolean" },
} as const;

const opened: { options: unknown; deps: StoreDeps }[] = [];
registerBackend("regtest", {
  options: TEST_OPTIONS,
  open: (options, deps) => {
    opened.push({ options, deps });
    return Promise.resolve(new FakeStore(false, "regtest"));
  },
});

async function configError(p: Promise<unknown>): Promise<string> {
  const e = await p.then(() => undefined, (e) => e);
  assert.ok(e instanceof ConfigError, `expected a ConfigError, got ${e}`);
  assert.equal(e.code, "config");
  return e.message;
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  await using dir = await tempDir("agentmem-registry-");
  await fn(dir.path);
}

Deno.test("openStore() returns an injected store itself when no backend is named", async () => {
  const fake = new FakeStore();
  assert.equal(await openStore({}, { store: fake }), fake);
  assert.equal(await openStore(undefined, { store: fake }), fake);
});

Deno.test("openStore() returns an injected store whose backend matches the named one", async () => {
  const fake = new FakeStore();
  assert.equal(await openStore({ backend: "fake" }, { store: fake }), fake);
});

Deno.test("openStore() refuses an injected store whose backend differs, naming both", async () => {
  const message = await configError(openStore({ backend: "file" }, { store: new FakeStore() }));
  assert.match(message, /"file"/);
  assert.match(message, /"fake"/);
});

Deno.test("openStore() with readOnly gives a read-only view of an injected store", async () => {
  const fake = new FakeStore();
  fake.seed("k", "d", "c");
  const store = await openStore({ readOnly: true }, { store: fake });
  assert.ok(isReadOnly(store));
  assert.deepEqual(await store.list(), [{ key: "k", description: "d" }]);
  await assert.rejects(store.create("x", "d", "c"), ReadOnlyError);
  await assert.rejects(store.update("k", "d", "c2"), ReadOnlyError);
  await assert.rejects(store.delete("k"), ReadOnlyError);
  assert.deepEqual(fake.calls.map((c) => c.op), ["list"]);
  assert.equal(fake.entries.get("k")?.content, "c");
});

Deno.test("openStore() opens a registered backend with decoded options and the host's deps", async () => {
  opened.length = 0;
  const nc = { fake: "connection" };
  const store = await openStore(
    { backend: "regtest", options: { url: "nats://x", retries: 2 } },
    { nc, identity: "alice" },
  );
  assert.equal(store.info().backend, "regtest");
  assert.deepEqual(opened[0]?.options, { url: "nats://x", retries: 2 });
  assert.equal(opened[0]?.deps.nc, nc);
  assert.equal(opened[0]?.deps.identity, "alice");
});

Deno.test("openStore() opens the file backend by default", async () => {
  await withDir(async (dir) => {
    const store = await openStore({ options: { dir } });
    assert.equal(store.info().backend, "file");
    assert.equal(store.info().location, "");
    await store.create("a", "d", "c");
    assert.deepEqual(await (await openFileStore({ dir })).read("a"), {
      description: "d",
      content: "c",
    });
  });
});

Deno.test("openStore() refuses an unknown backend, listing the registered ones", async () => {
  const message = await configError(openStore({ backend: "redis" }));
  assert.match(message, /unknown backend "redis"/);
  for (const name of registeredBackends()) assert.ok(message.includes(`"${name}"`));
  assert.ok(registeredBackends().includes("file"));
  assert.ok(registeredBackends().includes("regtest"));
});

Deno.test("openStore() refuses unknown config fields and wrong types", async () => {
  assert.match(await configError(openStore({ bakend: "file" } as never)), /unknown field "bakend"/);
  assert.match(await configError(openStore({ backend: 1 } as never)), /"backend" must be a string/);
  assert.match(
    await configError(openStore({ readOnly: "yes" } as never)),
    /"readOnly" must be a boolean/,
  );
  assert.match(await configError(openStore([] as never)), /expected an object/);
});

Deno.test("decodeOptions() fails the same way for every backend", async () => {
  // An unknown key and a wrong type, through openStore, for the file backend and another one.
  const unknownFile = await configError(openStore({ backend: "file", options: { dri: "/x" } }));
  const unknownTest = await configError(
    openStore({ backend: "regtest", options: { url: "u", rtries: 1 } }),
  );
  assert.equal(
    unknownFile,
    '[memory:file] Invalid options for the file backend: unknown option "dri"; allowed options: "dir", "durable", "readBeforeUpdate", "readOnly", "history", "review"',
  );
  assert.equal(
    unknownTest,
    '[memory:regtest] Invalid options for the regtest backend: unknown option "rtries"; allowed options: "url", "retries", "verbose"',
  );
  const typeFile = await configError(openStore({ backend: "file", options: { dir: 5 } }));
  const typeTest = await configError(
    openStore({ backend: "regtest", options: { url: "u", retries: "2" } }),
  );
  assert.equal(
    typeFile,
    '[memory:file] Invalid options for the file backend: option "dir" must be a string, got the number 5',
  );
  assert.equal(
    typeTest,
    '[memory:regtest] Invalid options for the regtest backend: option "retries" must be a number, got a string',
  );
  const missing = await configError(openStore({ backend: "regtest", options: {} }));
  assert.match(missing, /missing required option "url"; allowed options: "url", "retries"/);
  // The same function, called directly, says the same.
  assert.throws(() => decodeOptions("regtest", { url: "u", rtries: 1 }, TEST_OPTIONS), {
    message: unknownTest,
  });
  assert.throws(() => decodeOptions("x", { __proto__: null, a: 1 }, {}), /it takes no options/);
  assert.throws(() => decodeOptions("x", JSON.parse('{"__proto__": 1}'), TEST_OPTIONS), {
    message: /unknown option "__proto__"/,
  });
  assert.throws(() => decodeOptions("x", [], TEST_OPTIONS), /expected an object, got an array/);
});

Deno.test("openStore() still checks options given beside an injected store", async () => {
  await withDir(async (dir) => {
    const file = await openFileStore({ dir });
    const message = await configError(openStore({ options: { dri: dir } }, { store: file }));
    assert.match(message, /unknown option "dri"; allowed options: "dir", "durable"/);
    assert.equal(await openStore({ options: { dir } }, { store: file }), file);
  });
});

Deno.test("registerBackend() refuses a taken name, a bad name and a bad definition", () => {
  const def = { options: {}, open: () => Promise.resolve(new FakeStore() as Store) };
  assert.throws(() => registerBackend("file", def), /already registered/);
  assert.throws(() => registerBackend("Bad Name", def), ConfigError);
  assert.throws(() => registerBackend("nodef", {} as never), /"open" must be a function/);
});
