// Unit tests of the entry format: serializeEntry() and parseEntry().

import assert from "node:assert/strict";
import {
  CorruptError,
  InvalidContentError,
  InvalidDescriptionError,
  MAX_CONTENT_BYTES,
  MAX_DESCRIPTION_RUNES,
  MAX_ENTRY_BYTES,
  MemoryError,
  parseEntry,
  serializeEntry,
  TooLargeError,
} from "../../mod.ts";

const ENCODER = new TextEncoder();

function corrupt(stored: string | Uint8Array, key?: string): CorruptError {
  try {
    parseEntry(stored, key);
  } catch (e) {
    assert.ok(e instanceof CorruptError, `threw ${e}`);
    assert.ok(e instanceof MemoryError);
    assert.equal(e.code, "corrupt");
    assert.equal(e.key, key);
    return e;
  }
  assert.fail(`parseEntry(${JSON.stringify(stored)}) did not throw`);
}

Deno.test("serializeEntry() writes a one-line YAML header, then the body verbatim", () => {
  assert.equal(serializeEntry("hello", "body"), "---\ndescription: hello\n---\nbody");
  assert.equal(serializeEntry("", ""), '---\ndescription: ""\n---\n');
  assert.equal(serializeEntry("a: b", "x"), '---\ndescription: "a: b"\n---\nx');
  assert.equal(serializeEntry("  two\nlines ", "x"), "---\ndescription: two lines\n---\nx");
});

Deno.test("serializeEntry() keeps a long description on one header line", () => {
  const description = "word ".repeat(MAX_DESCRIPTION_RUNES / 5).trim();
  const text = serializeEntry(description, "");
  const lines = text.split("\n");
  assert.equal(lines.length, 4, JSON.stringify(text.slice(0, 200)));
  assert.equal(lines[1], `description: ${description}`);
});

Deno.test("serializeEntry() writes descriptions YAML would misread as quoted strings", () => {
  const awkward = [
    "null",
    "~",
    "true",
    "False",
    "42",
    "0x1F",
    "0o17",
    "1e3",
    ".inf",
    "-.5",
    "- item",
    "-",
    "? q",
    "# not a comment",
    "a #b",
    "trailing:",
    "key: value",
    "&anchor",
    "*alias",
    "!tag",
    "%directive",
    "@at",
    "`tick",
    "[a, b]",
    "{a: b}",
    "| block",
    "> folded",
    "'single'",
    '"double"',
    "'\"",
    "\\",
    '\\"',
    "---",
    "--- x",
    "...",
  ];
  for (const description of awkward) {
    const text = serializeEntry(description, "body");
    assert.equal(text.split("\n").length, 4, JSON.stringify(text));
    assert.deepEqual(parseEntry(text), { description, content: "body" }, JSON.stringify(text));
  }
});

Deno.test("parseEntry() returns the body byte for byte, header lookalikes included", () => {
  const bodies = [
    "",
    "---\n",
    "---\ndescription: forged\n---\nforged body",
    "\n---\n",
    "\n---",
    "\r\n---\r\n",
    "\u0000\u0007\u001b[2J\u007f\u0085\u009b",
    "\ufeffbom",
    "\u2028\u2029",
    "e\u0301 (not composed)",
    "\u{1F600}\u{10FFFF}",
    " leading and trailing \n\n",
  ];
  for (const content of bodies) {
    const text = serializeEntry("d", content);
    assert.deepEqual(parseEntry(text), { description: "d", content });
    assert.deepEqual(parseEntry(ENCODER.encode(text)), { description: "d", content });
  }
});

Deno.test("serializeEntry() refuses what validateWrite() refuses, with the same errors", () => {
  assert.throws(
    () => serializeEntry("x".repeat(MAX_DESCRIPTION_RUNES + 1), ""),
    InvalidDescriptionError,
  );
  assert.throws(() => serializeEntry("bell\u0007", ""), InvalidDescriptionError);
  assert.throws(() => serializeEntry("\ud800", ""), InvalidDescriptionError);
  assert.throws(() => serializeEntry("d", "\udc00"), InvalidContentError);
  assert.throws(() => serializeEntry("d", "x".repeat(MAX_CONTENT_BYTES + 1)), TooLargeError);
  const bad = (v: unknown) => v as string;
  assert.throws(() => serializeEntry(bad(1), ""), InvalidDescriptionError);
  assert.throws(() => serializeEntry("d", bad(null)), InvalidContentError);
});

Deno.test("serializeEntry() of the largest entry stays within MAX_ENTRY_BYTES", () => {
  const description = '"\\\u{1F600}'.repeat(MAX_DESCRIPTION_RUNES / 3) + "\u{1F600}\u{1F600}";
  const content = "\u{1F600}".repeat(MAX_CONTENT_BYTES / 4);
  const text = serializeEntry(description, content);
  assert.ok(ENCODER.encode(text).length <= MAX_ENTRY_BYTES);
  assert.deepEqual(parseEntry(text), { description, content });
});

Deno.test("parseEntry() normalizes a hand-written description and ignores other fields", () => {
  const text = '---\ndescription: "  spaced\\n\\tout  e\\u0301 "\nauthor: someone\n---\nbody';
  assert.deepEqual(parseEntry(text), { description: "spaced out \u00e9", content: "body" });
  assert.deepEqual(parseEntry("---\ndescription: >-\n  folded\n  text\n---\nb"), {
    description: "folded text",
    content: "b",
  });
});

Deno.test('parseEntry() accepts a final "---" line with no newline after it', () => {
  assert.deepEqual(parseEntry("---\ndescription: d\n---"), { description: "d", content: "" });
});

Deno.test("parseEntry() refuses text without a header", () => {
  for (
    const text of [
      "",
      "body",
      "description: d\n---\nbody",
      "\n---\ndescription: d\n---\n",
      " ---\n",
    ]
  ) {
    assert.match(
      corrupt(text, "k").message,
      /^Cannot parse memory "k": it does not start with a "---" header line/,
    );
  }
  assert.match(corrupt("---description: d\n---\n").message, /^Cannot parse a stored memory: /);
  // Only "\n" ends a header line.
  corrupt("---\r\ndescription: d\r\n---\r\nbody");
});

Deno.test("parseEntry() refuses a header that is never closed", () => {
  for (
    const text of [
      "---\n",
      "---\ndescription: d\n",
      "---\ndescription: d\nbody",
      "---\ndescription: d\n--\nbody",
      "---\ndescription: d\n----\nbody",
      "---\ndescription: d\n --- \nbody",
    ]
  ) {
    assert.match(
      corrupt(text, "k").message,
      /header is not closed by a "---" line/,
      JSON.stringify(text),
    );
  }
});

Deno.test("parseEntry() refuses a header closed beyond the header budget", () => {
  const padding = "#" + "x".repeat(MAX_ENTRY_BYTES - MAX_CONTENT_BYTES) + "\n";
  const text = `---\n${padding}description: d\n---\nbody`;
  assert.match(corrupt(text).message, /not closed by a "---" line within \d+ bytes/);
});

Deno.test("parseEntry() refuses a header that is not a YAML mapping with a string description", () => {
  const cases: Array<[RegExp, string[]]> = [
    [/no string description/, [
      "---\n---\nbody",
      "---\nother: d\n---\n",
      "---\ndescription: 42\n---\n",
      "---\ndescription: true\n---\n",
      "---\ndescription: null\n---\n",
      "---\ndescription:\n---\n",
      "---\ndescription: [a, b]\n---\n",
      "---\ndescription: {a: b}\n---\n",
      "---\n- description\n---\n",
      "---\njust text\n---\n",
    ]],
    [/not valid YAML/, [
      '---\ndescription: "unclosed\n---\n',
      "---\ndescription: [a\n---\n",
      "---\ndescription: a\ndescription: b\n---\n",
      "---\ndescription: a\n  bad: indent\n---\n",
      "---\n\tdescription: d\n---\n",
    ]],
    [/not valid YAML|no string description/, ["---\nx: &a d\ndescription: *a\n---\n"]],
  ];
  for (const [message, texts] of cases) {
    for (const text of texts) {
      assert.match(corrupt(text, "k").message, message, JSON.stringify(text));
    }
  }
});

Deno.test("parseEntry() refuses a hand-written description with control characters", () => {
  for (
    const header of [
      'description: "bell \\a"',
      'description: "esc \\e[31m"',
      'description: "nul \\0"',
      'description: "csi \\x9b"',
      "description: del \u007f here",
      'description: "lone \\ud800"',
    ]
  ) {
    const e = corrupt(`---\n${header}\n---\nbody`, "k");
    assert.match(
      e.message,
      /^Cannot parse memory "k": Invalid description of memory "k": it contains/,
    );
  }
});

Deno.test("parseEntry() refuses a hand-written description over the limit", () => {
  const e = corrupt(`---\ndescription: ${"x".repeat(MAX_DESCRIPTION_RUNES + 1)}\n---\n`);
  assert.match(e.message, /over the limit of 500/);
});

Deno.test("parseEntry() refuses a body over 65,536 bytes or with a lone surrogate", () => {
  const header = "---\ndescription: d\n---\n";
  const big = corrupt(header + "x".repeat(MAX_CONTENT_BYTES + 1), "k");
  assert.match(big.message, /^Cannot parse memory "k": .*65537 bytes/);
  corrupt(ENCODER.encode(header + "\u00e9".repeat(MAX_CONTENT_BYTES / 2) + "x"));
  assert.match(corrupt(header + "a\ud800b").message, /lone surrogate/);
  assert.equal(
    parseEntry(header + "x".repeat(MAX_CONTENT_BYTES)).content.length,
    MAX_CONTENT_BYTES,
  );
});

Deno.test("parseEntry() refuses bytes that are not valid UTF-8", () => {
  const header = ENCODER.encode("---\ndescription: d\n---\n");
  const tails = [
    [0xff],
    [0xc3], // truncated two-byte sequence
    [0xe2, 0x82], // truncated three-byte sequence
    [0xc0, 0xaf], // overlong "/"
    [0xed, 0xa0, 0x80], // an encoded surrogate
    [0xf4, 0x90, 0x80, 0x80], // beyond U+10FFFF
    [0x80], // a lone continuation byte
  ];
  for (const tail of tails) {
    const bytes = new Uint8Array([...header, ...tail]);
    assert.match(corrupt(bytes, "k").message, /^Cannot parse memory "k": it is not valid UTF-8/);
  }
  const inHeader = new Uint8Array([
    ...ENCODER.encode("---\ndescription: "),
    0xfe,
    ...ENCODER.encode("\n---\n"),
  ]);
  assert.match(corrupt(inHeader).message, /not valid UTF-8/);
});
