// Unit tests of decodeOptions(), the strict decoder every backend's options go through.

import assert from "node:assert/strict";
import { ConfigError, decodeOptions, MemoryError, openFileStore, openStore } from "../../mod.ts";

const SCHEMA = {
  dir: { type: "string", required: true },
  durable: { type: "boolean" },
  limit: { type: "number" },
} as const;

const ALLOWED = /allowed options: "dir", "durable", "limit"/;

function configError(
  raw: unknown,
  schema: typeof SCHEMA | Record<string, never> = SCHEMA,
): ConfigError {
  try {
    decodeOptions("demo", raw, schema);
  } catch (e) {
    assert.ok(e instanceof ConfigError, `threw ${e}`);
    assert.ok(e instanceof MemoryError);
    assert.equal(e.code, "config");
    assert.match(e.message, /^\[memory:demo\] Invalid options for the demo backend: /);
    return e;
  }
  assert.fail(`decodeOptions(${String(raw)}) did not throw`);
}

Deno.test("decodeOptions() returns the declared options with their values", () => {
  assert.deepEqual(decodeOptions("demo", { dir: "/m", durable: false, limit: 0 }, SCHEMA), {
    dir: "/m",
    durable: false,
    limit: 0,
  });
  assert.deepEqual(decodeOptions("demo", { dir: "" }, SCHEMA), { dir: "" });
  assert.deepEqual(decodeOptions("demo", { limit: -1.5, dir: "x" }, SCHEMA), {
    limit: -1.5,
    dir: "x",
  });
});

Deno.test("decodeOptions() refuses an unknown option, naming it and the allowed ones", () => {
  for (
    const key of ["dri", "Dir", "DIR", "dir ", "", "toString", "constructor", "hasOwnProperty"]
  ) {
    const e = configError({ dir: "/m", [key]: "x" });
    assert.ok(e.message.includes(`unknown option ${JSON.stringify(key)}`), e.message);
    assert.match(e.message, ALLOWED);
  }
});

Deno.test("decodeOptions() refuses an unknown option even when its value is undefined", () => {
  // A typo fed from a missing environment variable must not pass silently.
  const e = configError({ dir: "/m", durabel: undefined });
  assert.match(e.message, /unknown option "durabel"/);
});

Deno.test("decodeOptions() says a backend that takes no options takes none", () => {
  assert.deepEqual(decodeOptions("demo", {}, {}), {});
  assert.deepEqual(decodeOptions("demo", undefined, {}), {});
  const e = configError({ x: 1 }, {});
  assert.match(e.message, /unknown option "x"; it takes no options/);
});

Deno.test("decodeOptions() refuses a value of the wrong type, naming the option and the type", () => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ dir: 1 }, /option "dir" must be a string, got the number 1/],
    [{ dir: null }, /option "dir" must be a string, got null/],
    [{ dir: ["/m"] }, /option "dir" must be a string, got an array/],
    [{ dir: new String("/m") }, /option "dir" must be a string, got an object/],
    [{ dir: "/m", durable: "true" }, /option "durable" must be a boolean, got a string/],
    [{ dir: "/m", durable: 1 }, /option "durable" must be a boolean, got the number 1/],
    [{ dir: "/m", durable: null }, /option "durable" must be a boolean, got null/],
    [{ dir: "/m", limit: "5" }, /option "limit" must be a number, got a string/],
    [{ dir: "/m", limit: NaN }, /option "limit" must be a number, got the number NaN/],
    [{ dir: "/m", limit: Infinity }, /option "limit" must be a number/],
    [{ dir: "/m", limit: 5n }, /option "limit" must be a number, got a bigint/],
  ];
  for (const [raw, message] of cases) assert.match(configError(raw).message, message);
});

Deno.test("decodeOptions() refuses a block without a required option, naming it", () => {
  for (const raw of [{}, { durable: true }, undefined, null]) {
    const e = configError(raw);
    assert.match(e.message, /missing required option "dir"/);
    assert.match(e.message, ALLOWED);
  }
});

Deno.test("decodeOptions() treats an option whose value is undefined as absent", () => {
  const out = decodeOptions("demo", { dir: "/m", durable: undefined, limit: undefined }, SCHEMA);
  assert.deepEqual(out, { dir: "/m" });
  assert.ok(!("durable" in out));
  assert.ok(!("limit" in out));
  assert.match(configError({ dir: undefined }).message, /missing required option "dir"/);
});

Deno.test("decodeOptions() refuses an options block that is not a plain object", () => {
  const cases: Array<[unknown, RegExp]> = [
    ["/m", /expected an object, got a string/],
    [42, /got the number 42/],
    [true, /got the boolean true/],
    [[], /got an array/],
    [["/m"], /got an array/],
    [() => ({ dir: "/m" }), /got a function/],
    [Symbol("x"), /got a symbol/],
    [new Map([["dir", "/m"]]), /expected a plain object, got an instance of Map/],
    [new Date(0), /got an instance of Date/],
    [
      new (class Options {
        dir = "/m";
      })(),
      /expected a plain object/,
    ],
    [Object.create({ dir: "/m" }), /got an object with a custom prototype/],
  ];
  for (const [raw, message] of cases) {
    const e = configError(raw);
    assert.match(e.message, message, String(raw));
    assert.match(e.message, ALLOWED);
  }
});

Deno.test("decodeOptions() accepts a plain object without a prototype", () => {
  const raw = Object.assign(Object.create(null), { dir: "/m" });
  assert.deepEqual({ ...decodeOptions("demo", raw, SCHEMA) }, { dir: "/m" });
});

Deno.test("decodeOptions() does not let a __proto__ key pollute anything", () => {
  const raw = JSON.parse('{"dir": "/m", "__proto__": {"polluted": true, "durable": true}}');
  assert.ok(Object.hasOwn(raw, "__proto__"), "the test needs an own __proto__ key");
  assert.match(configError(raw).message, /unknown option "__proto__"/);
  // Even a schema that declares "__proto__" gets it back as plain data.
  const schema = JSON.parse('{"__proto__": {"type": "string"}}');
  const out = decodeOptions("demo", JSON.parse('{"__proto__": "value"}'), schema) as Record<
    string,
    unknown
  >;
  assert.ok(Object.hasOwn(out, "__proto__"));
  assert.equal(Object.getOwnPropertyDescriptor(out, "__proto__")?.value, "value");
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  const inherited = JSON.parse('{"__proto__": {"polluted": true}}');
  assert.throws(() => decodeOptions("demo", inherited, schema), ConfigError);
  assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
  assert.equal(Object.hasOwn(Object.prototype, "polluted"), false);
});

Deno.test("decodeOptions() returns a new object, not the caller's", () => {
  const raw = { dir: "/m" };
  const out = decodeOptions("demo", raw, SCHEMA);
  assert.notEqual(out, raw);
  (out as { dir: string }).dir = "/changed";
  assert.equal(raw.dir, "/m");
});

Deno.test("decodeOptions() keeps a hostile option name short in its message", () => {
  const e = configError({ dir: "/m", ["\u009b2J" + "x".repeat(100_000)]: 1 });
  assert.ok(e.message.length < 400, `${e.message.length} characters`);
  assert.ok(!e.message.includes("\u009b"));
});

Deno.test("the file backend's options fail the way decodeOptions() says", async () => {
  const viaOpenStore = await openStore({ backend: "file", options: { dri: "/m" } }).then(
    () => assert.fail("openStore accepted an unknown option"),
    (e) => e,
  );
  const viaOpenFileStore = await openFileStore({ dri: "/m" } as unknown as { dir: string }).then(
    () => assert.fail("openFileStore accepted an unknown option"),
    (e) => e,
  );
  for (const e of [viaOpenStore, viaOpenFileStore]) {
    assert.ok(e instanceof ConfigError);
    assert.match(
      e.message,
      /^\[memory:file\] Invalid options for the file backend: unknown option "dri"; allowed options: "dir", "durable"/,
    );
  }
  const wrongType = await openStore({ backend: "file", options: { dir: 7 } }).then(
    () => assert.fail("openStore accepted a number for dir"),
    (e) => e,
  );
  assert.ok(wrongType instanceof ConfigError);
  assert.match(wrongType.message, /option "dir" must be a string, got the number 7/);
});
