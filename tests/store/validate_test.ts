// Unit tests of validation (keys, descriptions, bodies, capacity) and of the error classes.

import assert from "node:assert/strict";
import {
  CapacityError,
  checkCapacity,
  ConfigError,
  CorruptError,
  ExistsError,
  InvalidContentError,
  InvalidDescriptionError,
  InvalidKeyError,
  LEGAL_KEY,
  MAX_CONTENT_BYTES,
  MAX_DESCRIPTION_RUNES,
  MAX_ENTRIES,
  MAX_ENTRY_BYTES,
  MAX_KEY_RUNES,
  MemoryError,
  type MemoryErrorCode,
  normalizeDescription,
  NotFoundError,
  ReadOnlyError,
  StaleError,
  TooLargeError,
  UnavailableError,
  validateContent,
  validateKey,
  validateWrite,
} from "../../mod.ts";

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  assert.fail("expected a throw");
}

/** What a refusal must be: its code, its key (`undefined` for none) and its message. */
interface Refusal {
  readonly code?: MemoryErrorCode;
  readonly key?: string | undefined;
  readonly message?: RegExp;
}

// What `fn` throws, checked to be a `type` with the code, key and message `want` gives.
function refused<T extends MemoryError>(
  fn: () => unknown,
  type: abstract new (...args: never[]) => T,
  want: Refusal,
  what = "",
): T {
  const e = thrown(fn);
  assert.ok(e instanceof type, `${what} threw ${e}`);
  if ("code" in want) assert.equal(e.code, want.code, what);
  if ("key" in want) assert.equal(e.key, want.key, what);
  if (want.message !== undefined) assert.match(e.message, want.message, what);
  return e;
}

function keyError(key: unknown): InvalidKeyError {
  const e = thrown(() => validateKey(key));
  assert.ok(e instanceof InvalidKeyError, `validateKey(${String(key)}) threw ${e}`);
  return e;
}

// ---------------------------------------------------------------------------------------------
// Limits and error classes

Deno.test("the limits have the documented values", () => {
  assert.equal(MAX_KEY_RUNES, 200);
  assert.equal(MAX_DESCRIPTION_RUNES, 500);
  assert.equal(MAX_CONTENT_BYTES, 65_536);
  assert.equal(MAX_ENTRIES, 1_024);
  assert.equal(MAX_ENTRY_BYTES, 65_536 + 2 * 500 * 4 + 64);
});

Deno.test("every error class has its code and name and is a MemoryError", () => {
  const classes: Array<
    [new (m: string, o?: { key?: string; cause?: unknown }) => MemoryError, MemoryErrorCode]
  > = [
    [InvalidKeyError, "invalid_key"],
    [InvalidDescriptionError, "invalid_description"],
    [InvalidContentError, "invalid_content"],
    [TooLargeError, "too_large"],
    [CapacityError, "capacity"],
    [ExistsError, "exists"],
    [StaleError, "stale"],
    [NotFoundError, "not_found"],
    [CorruptError, "corrupt"],
    [ReadOnlyError, "read_only"],
    [ConfigError, "config"],
    [UnavailableError, "unavailable"],
  ];
  const codes = new Set<string>();
  for (const [Class, code] of classes) {
    const cause = new Error("underlying");
    const e = new Class("Cannot do it: because", { key: "k", cause });
    assert.ok(e instanceof Class);
    assert.ok(e instanceof MemoryError);
    assert.ok(e instanceof Error);
    assert.equal(e.code, code);
    assert.equal(e.name, Class.name);
    assert.equal(e.message, "Cannot do it: because");
    assert.equal(e.key, "k");
    assert.equal(e.cause, cause);
    assert.match(String(e), new RegExp(`^${Class.name}: Cannot do it`));
    assert.ok(typeof e.stack === "string" && e.stack.length > 0);
    codes.add(e.code);
    const bare = new Class("m");
    assert.equal(bare.key, undefined);
    assert.ok(!("cause" in bare), `${Class.name} has a cause it was not given`);
  }
  assert.equal(codes.size, classes.length, "two classes share a code");
});

Deno.test("MemoryError carries any code and is not one of the subclasses", () => {
  const e = new MemoryError("stale", 'Cannot update memory "k": it changed');
  assert.equal(e.name, "MemoryError");
  assert.equal(e.code, "stale");
  assert.ok(!(e instanceof StaleError));
});

// ---------------------------------------------------------------------------------------------
// validateKey()

Deno.test("validateKey() returns a legal key unchanged", () => {
  for (
    const key of ["a", "Z", "0", "a.b", "a_b", "a=b", "a-b", "-", "_", "=", "-.-", "k".repeat(200)]
  ) {
    assert.equal(validateKey(key), key);
  }
});

const REFUSED: Array<[string, string, RegExp]> = [
  ["", "an empty key", /it is empty/],
  [".", "a single dot", /starts with "\."/],
  ["..", "a key of two dots", /starts with "\."/],
  ["../x", 'a key with ".." and "/"', /contains "\/"/],
  ["a/b", 'a key with "/"', /contains "\/"/],
  ["a\\b", "a key with a backslash", /contains "\\\\"/],
  [".hidden", "a key starting with a dot", /starts with "\."/],
  ["x.", "a key ending with a dot", /ends with "\."/],
  ["a..b", 'a key with ".."', /contains "\.\."/],
  ["a b", "a key with a space", /contains " "/],
  ["a\tb", "a key with a tab", /contains "\\t"/],
  ["a\nb", "a key with a line feed", /contains "\\n"/],
  ["a\u0000b", "a key with NUL", /contains "\\u0000"/],
  ["caf\u00e9", "a key with a non-ASCII letter", /contains "\u00e9"/],
  ["\u212a", "a key with the Kelvin sign", /contains "\u212a"/],
  ["a\u{1F600}", "a key with an emoji", /contains "\u{1F600}"/u],
  ["a\ud800", "a key with a lone surrogate", /contains "\\ud800"/],
  ["a:b", 'a key with ":"', /contains ":"/],
  ["a*b", 'a key with "*"', /contains "\*"/],
  ["k".repeat(201), "a 201-character key", /it has 201 characters, over the limit of 200/],
];

for (const [key, what, problem] of REFUSED) {
  Deno.test(`validateKey() refuses ${what}, naming the key and what a legal key looks like`, () => {
    const e = keyError(key);
    assert.equal(e.code, "invalid_key");
    assert.equal(e.key, key);
    assert.match(e.message, problem);
    if (key.length <= 64) assert.ok(e.message.includes(JSON.stringify(key)), e.message);
    assert.ok(e.message.includes(LEGAL_KEY), e.message);
    assert.match(e.message, /^Invalid memory key /);
  });
}

Deno.test("LEGAL_KEY says which characters, how many and the rules about dots", () => {
  assert.match(LEGAL_KEY, /200/);
  assert.match(LEGAL_KEY, /A-Z a-z 0-9 \. _ = -/);
  assert.match(LEGAL_KEY, /"\."/);
  assert.match(LEGAL_KEY, /"\.\."/);
});

Deno.test("validateKey() refuses a value that is not a string", () => {
  const cases: Array<[unknown, RegExp]> = [
    [undefined, /key nothing: it is not a string/],
    [null, /key null/],
    [42, /key the number 42/],
    [true, /the boolean true/],
    [["a"], /an array/],
    [{ toString: () => "a" }, /an object/],
    [new String("a"), /an object/],
    [Symbol("a"), /a symbol/],
    [10n, /a bigint/],
  ];
  for (const [key, message] of cases) {
    const e = keyError(key);
    assert.match(e.message, message);
    assert.equal(e.key, undefined);
  }
});

Deno.test("validateKey() keeps a hostile long key out of its message", () => {
  const key = "\u0007".repeat(10) + "x".repeat(10_000_000);
  const e = keyError(key);
  assert.equal(e.key, key, "the error still carries the whole key for the caller");
  assert.ok(e.message.length < 500, `a message of ${e.message.length} characters`);
  assert.match(e.message, /"\\u0007\\u0007/);
  assert.match(e.message, /…" \(10000010 chars\)/);
  assert.match(e.message, /it has 10000010 characters, over the limit of 200/);
});

Deno.test("validateKey() messages cut a long key on its first 64 characters", () => {
  const key = "a".repeat(64) + "/" + "b".repeat(100);
  const e = keyError(key);
  assert.ok(e.message.includes(`"${"a".repeat(64)}…" (165 chars)`), e.message);
  assert.ok(!e.message.includes("b".repeat(65)));
  // A cut through a surrogate pair still yields well-formed text.
  const emoji = keyError("x".repeat(63) + "\u{1F600}".repeat(10));
  assert.ok(emoji.message.isWellFormed());
});

Deno.test("validateKey() messages escape control characters and line breaks of a key", () => {
  const controls = [
    "\u0000",
    "\u001b",
    "\u007f",
    "\u0085",
    "\u009b",
    "\u2028",
    "\u2029",
    "\u202e",
    "\u2066",
    "\ud800",
  ];
  for (const ch of controls) {
    const e = keyError(`a${ch}[2J`);
    const hex = ch.charCodeAt(0).toString(16).padStart(4, "0");
    assert.ok(!e.message.includes(ch), `U+${hex} reaches the message raw`);
    assert.ok(e.message.includes(`\\u${hex}`), `U+${hex} is not escaped in ${e.message}`);
  }
});

// ---------------------------------------------------------------------------------------------
// normalizeDescription()

Deno.test("normalizeDescription() folds white space and line breaks, trims and applies NFC", () => {
  const cases: Array<[string, string]> = [
    ["  plain  ", "plain"],
    ["a\nb", "a b"],
    ["a\r\n\r\nb", "a b"],
    ["a\t \t b", "a b"],
    ["a\u0085b", "a b"],
    ["a\u2028b\u2029c", "a b c"],
    ["\ufeffa\u00a0b\u3000", "a b"],
    ["a\u000b\u000cb", "a b"],
    ["e\u0301", "\u00e9"],
    ["\u212b", "\u00c5"],
    ["\u1100\u1161", "\uac00"],
    ["a\u200bb", "a\u200bb"],
    ["", ""],
    [" \n\t ", ""],
    ['say: "hi" - #1', 'say: "hi" - #1'],
  ];
  for (const [raw, expected] of cases) {
    assert.equal(normalizeDescription(raw), expected, JSON.stringify(raw));
  }
});

Deno.test("normalizeDescription() counts the limit in code points after normalization", () => {
  assert.equal(normalizeDescription("x".repeat(500)).length, 500);
  assert.equal(normalizeDescription("\u{1F600}".repeat(500)).length, 1000);
  assert.equal(normalizeDescription(`  ${"x".repeat(500)}\n`).length, 500);
  assert.equal(normalizeDescription("a" + " \n ".repeat(1000) + "b"), "a b");
  assert.equal(normalizeDescription("e\u0301".repeat(500)), "\u00e9".repeat(500));
  for (const raw of ["x".repeat(501), "\u{1F600}".repeat(501), "a ".repeat(250) + "b"]) {
    refused(() => normalizeDescription(raw, "k"), InvalidDescriptionError, {
      code: "invalid_description",
      key: "k",
      message: /^Invalid description of memory "k": it has 501 characters, over the limit of 500/,
    });
  }
});

Deno.test("normalizeDescription() refuses a control character, naming it", () => {
  for (
    const ch of ["\u0000", "\u0007", "\u001b", "\u001f", "\u007f", "\u0080", "\u009b", "\u009f"]
  ) {
    const e = thrown(() => normalizeDescription(`bad ${ch} here`, "k"));
    assert.ok(e instanceof InvalidDescriptionError, JSON.stringify(ch));
    const hex = ch.charCodeAt(0).toString(16).padStart(4, "0");
    assert.ok(e.message.includes(`control character "\\u${hex}"`), e.message);
    assert.match(e.message, /one line of at most 500 characters without control characters/);
  }
});

Deno.test("normalizeDescription() refuses a lone surrogate and a value that is not a string", () => {
  for (const raw of ["\ud800", "a\udfffb", "\u{1F600}".slice(1)]) {
    refused(() => normalizeDescription(raw), InvalidDescriptionError, {
      message: /^Invalid description: it contains a lone surrogate/,
      key: undefined,
    });
  }
  for (const raw of [undefined, null, 42, ["a"], { a: 1 }]) {
    refused(() => normalizeDescription(raw), InvalidDescriptionError, { message: /not a string/ });
  }
});

// ---------------------------------------------------------------------------------------------
// validateContent(), validateWrite(), checkCapacity()

Deno.test("validateContent() accepts up to 65,536 UTF-8 bytes, byte for byte", () => {
  const bodies = [
    "",
    "x".repeat(MAX_CONTENT_BYTES),
    "\u00e9".repeat(MAX_CONTENT_BYTES / 2),
    "\u4e2d".repeat((MAX_CONTENT_BYTES - 1) / 3) + "x",
    "\u{1F600}".repeat(MAX_CONTENT_BYTES / 4),
    "nul\u0000 bell\u0007 \r\n\u2028\ufeff",
  ];
  for (const body of bodies) assert.equal(validateContent(body), body);
});

Deno.test("validateContent() refuses 65,537 UTF-8 bytes with TooLargeError", () => {
  const bodies = [
    "x".repeat(MAX_CONTENT_BYTES + 1),
    "x".repeat(MAX_CONTENT_BYTES - 1) + "\u00e9",
    "\u4e2d".repeat((MAX_CONTENT_BYTES - 1) / 3) + "\u00e9",
    "\u{1F600}".repeat(MAX_CONTENT_BYTES / 4) + "x",
    // Fewer UTF-16 units than the limit, more bytes.
    "\u4e2d".repeat(MAX_CONTENT_BYTES / 3 + 1),
  ];
  for (const body of bodies) {
    refused(() => validateContent(body, "big"), TooLargeError, {
      code: "too_large",
      key: "big",
      message:
        /^Content of memory "big" is too large: \d+ bytes of UTF-8, over the limit of 65536 bytes/,
    });
  }
});

Deno.test("validateContent() refuses a lone surrogate and a value that is not a string", () => {
  for (const body of ["\ud800", "a\udc00", "x".repeat(70_000) + "\ud800"]) {
    refused(() => validateContent(body, "k"), InvalidContentError, {
      code: "invalid_content",
      message: /lone surrogate/,
    });
  }
  for (const body of [undefined, null, 1, new Uint8Array(1)]) {
    refused(() => validateContent(body), InvalidContentError, { message: /not a string/ });
  }
});

Deno.test("validateWrite() returns the key, the normalized description and the body", () => {
  assert.deepEqual(validateWrite("todo", "  buy\n milk  ", " 2 litres\n"), {
    key: "todo",
    description: "buy milk",
    content: " 2 litres\n",
  });
});

Deno.test("validateWrite() checks the key first, then the description, then the body", () => {
  assert.ok(thrown(() => validateWrite("../x", "\u0000", "\ud800")) instanceof InvalidKeyError);
  assert.ok(
    thrown(() => validateWrite("k", "\u0000", "\ud800")) instanceof InvalidDescriptionError,
  );
  assert.ok(thrown(() => validateWrite("k", "ok", "\ud800")) instanceof InvalidContentError);
  refused(() => validateWrite("k", "ok", "x".repeat(MAX_CONTENT_BYTES + 1)), TooLargeError, {
    message: /memory "k"/,
  });
});

Deno.test("checkCapacity() refuses a create once the store holds MAX_ENTRIES", () => {
  checkCapacity(0);
  checkCapacity(MAX_ENTRIES - 1, "k");
  for (const count of [MAX_ENTRIES, MAX_ENTRIES + 5]) {
    refused(() => checkCapacity(count, "k"), CapacityError, {
      code: "capacity",
      key: "k",
      message: new RegExp(
        `Cannot create memory "k": the store holds ${count} memories, the limit is 1024`,
      ),
    });
  }
  assert.match(
    (thrown(() => checkCapacity(MAX_ENTRIES)) as Error).message,
    /Cannot create a memory/,
  );
});
