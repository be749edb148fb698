// Property tests of the shared mechanics: key validation, the entry format, its size bound,
// description normalization and the scope's journal round trip. Each property runs at least
// 1,000 generated cases; the generators lean on the characters most likely to break things.

import assert from "node:assert/strict";
import fc from "fast-check";
import { parse, stringify } from "yaml";
import { readCanonicalHeader } from "../../store/yaml.ts";
import {
  InvalidDescriptionError,
  InvalidKeyError,
  latestScope,
  MAX_CONTENT_BYTES,
  MAX_DESCRIPTION_RUNES,
  MAX_ENTRY_BYTES,
  MAX_KEY_RUNES,
  normalizeDescription,
  openFileStore,
  parseEntry,
  Scope,
  SCOPE_SNAPSHOT_KIND,
  SCOPE_SNAPSHOT_VERSION,
  type ScopeSnapshot,
  serializeEntry,
  validateKey,
} from "../../mod.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { isBookkeepingName } from "../../backends/file/testing.ts";

const RUNS = 1_000;
const ENCODER = new TextEncoder();

function bytes(s: string): number {
  return ENCODER.encode(s).length;
}

function runes(s: string): number {
  return [...s].length;
}

// ---------------------------------------------------------------------------------------------
// Keys

// The reference predicate, written without the library's regular expression: 1 to 200 UTF-16
// units, each one of A-Z a-z 0-9 . _ = -, no dot first or last, no two dots in a row.
function isLegalKey(key: string): boolean {
  if (key.length < 1 || key.length > MAX_KEY_RUNES) return false;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    const legal = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) ||
      (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x5f || c === 0x3d || c === 0x2d;
    if (!legal) return false;
    if (c === 0x2e && (i === 0 || i === key.length - 1 || key.charCodeAt(i - 1) === 0x2e)) {
      return false;
    }
  }
  return true;
}

const LEGAL_CHARS = "ABCXYZabcxyz0189._=-";
const TRICKY_KEY_CHARS = [
  ".",
  "..",
  "/",
  "\\",
  " ",
  "\t",
  "\n",
  "\r",
  "\u0000",
  "\u001f",
  "\u007f",
  "\u0085",
  "\u00a0",
  "\u2028",
  "\ufeff",
  "\u00e9",
  "\u0130", // İ, whose lower case is two code points
  "\u212a", // KELVIN SIGN, which case-folds to "k"
  "\u017f", // LATIN SMALL LETTER LONG S, which case-folds to "s"
  "\uff0e", // FULLWIDTH FULL STOP
  "\u2024", // ONE DOT LEADER
  "\u0660", // ARABIC-INDIC DIGIT ZERO
  "\u{1d7d8}", // MATHEMATICAL DOUBLE-STRUCK DIGIT ZERO
  "\u{1F600}",
  "\ud800",
  "\udfff",
  "*",
  ">",
  ":",
  "~",
  "+",
  "%",
  "$",
  "?",
  '"',
  "'",
];

// Any code point, lone surrogates included (String.fromCodePoint makes one for D800-DFFF).
const anyCodePoint = fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c));
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));

const keyUnit = fc.oneof(
  { arbitrary: fc.constantFrom(...LEGAL_CHARS), weight: 12 },
  { arbitrary: fc.constantFrom(...TRICKY_KEY_CHARS), weight: 3 },
  { arbitrary: anyCodePoint, weight: 1 },
  { arbitrary: loneSurrogate, weight: 1 },
);

// Short keys, keys right around the 200-character limit, and everything between.
const keyLength = fc.oneof(
  fc.integer({ min: 0, max: 12 }),
  fc.integer({ min: MAX_KEY_RUNES - 5, max: MAX_KEY_RUNES + 5 }),
  fc.integer({ min: 0, max: MAX_KEY_RUNES + 60 }),
);

// Units may be several UTF-16 units long, so cut to the drawn length; a cut can leave a lone
// surrogate behind, which is one more case worth trying.
const anyKey = keyLength.chain((n) =>
  fc.array(keyUnit, { minLength: n, maxLength: n }).map((units) => units.join("").slice(0, n))
);

// Legal keys by construction, of every length up to the limit: legal characters, with any dot
// that would come first, last or after another dot turned into "_".
const legalKey = fc
  .oneof(
    fc.integer({ min: 1, max: 12 }),
    fc.integer({ min: MAX_KEY_RUNES - 5, max: MAX_KEY_RUNES }),
    fc.integer({ min: 1, max: MAX_KEY_RUNES }),
  )
  .chain((n) => fc.string({ unit: fc.constantFrom(...LEGAL_CHARS), minLength: n, maxLength: n }))
  .map((s) =>
    [...s].map((ch, i) =>
      ch === "." && (i === 0 || i === s.length - 1 || s[i - 1] === ".") ? "_" : ch
    )
      .join("")
  );

// A legal key with one tricky character put somewhere in it (or appended, past the limit).
const nearlyLegalKey = fc
  .tuple(legalKey, fc.constantFrom(...TRICKY_KEY_CHARS, ...LEGAL_CHARS), fc.nat())
  .map(([key, ch, at]) => {
    const i = at % (key.length + 1);
    return key.slice(0, i) + ch + key.slice(i);
  });

function accepts(key: string): boolean {
  try {
    assert.equal(validateKey(key), key);
    return true;
  } catch (e) {
    assert.ok(e instanceof InvalidKeyError, `validateKey threw ${e} instead of InvalidKeyError`);
    assert.equal(e.code, "invalid_key");
    return false;
  }
}

Deno.test("validateKey() accepts a key exactly when the reference predicate does", () => {
  fc.assert(
    fc.property(fc.oneof(anyKey, nearlyLegalKey), (key) => {
      assert.equal(accepts(key), isLegalKey(key), `key ${JSON.stringify(key)}`);
    }),
    { numRuns: RUNS * 5 },
  );
});

Deno.test("validateKey() accepts every legal key, up to 200 characters", () => {
  fc.assert(
    fc.property(legalKey, (key) => {
      assert.ok(isLegalKey(key), `generator produced ${JSON.stringify(key)}`);
      assert.ok(accepts(key), `key ${JSON.stringify(key)}`);
    }),
    { numRuns: RUNS },
  );
});

Deno.test("the key generators reach both verdicts, the limit and every tricky character", () => {
  // Guards against generators that drifted into producing only one kind of key.
  const keys = fc.sample(fc.oneof(anyKey, nearlyLegalKey), { numRuns: 5_000, seed: 7 });
  const legal = keys.filter(isLegalKey);
  assert.ok(legal.length > 250, `only ${legal.length} legal keys`);
  assert.ok(keys.length - legal.length > 250, `only ${keys.length - legal.length} illegal keys`);
  assert.ok(legal.some((k) => k.length >= MAX_KEY_RUNES - 5), "no legal key near the limit");
  assert.ok(keys.some((k) => k.length === MAX_KEY_RUNES + 1), "no key one over the limit");
  assert.ok(keys.some((k) => !k.isWellFormed()), "no key with a lone surrogate");
  for (const ch of TRICKY_KEY_CHARS) {
    assert.ok(keys.some((k) => k.includes(ch)), `no key holds ${JSON.stringify(ch)}`);
  }
});

// ---------------------------------------------------------------------------------------------
// Descriptions and bodies

// Characters and fragments that are hard on a YAML header or on normalization. No control
// character other than white space: those make a description invalid.
const TRICKY_TEXT = [
  '"',
  "'",
  "\\",
  '\\"',
  "'\"",
  ":",
  ": ",
  "#",
  " #",
  "-",
  "- ",
  "--",
  "---",
  "...",
  "? ",
  "|",
  ">",
  "&a",
  "*a",
  "!",
  "!!str",
  "%",
  "@",
  "`",
  "{",
  "}",
  "[",
  "]",
  ",",
  "~",
  "null",
  "true",
  "0x1F",
  "1e3",
  ".inf",
  "<<",
  "description: forged",
  " ",
  "  ",
  "\t",
  "\n",
  "\r\n",
  "\r",
  "\u000b",
  "\u000c",
  "\u0085", // NEXT LINE
  "\u2028", // LINE SEPARATOR
  "\u2029", // PARAGRAPH SEPARATOR
  "\ufeff", // BYTE ORDER MARK
  "\u00a0", // NO-BREAK SPACE
  "\u3000",
  "\u200b", // ZERO WIDTH SPACE, which is not white space
  "\u200e",
  "\u{1F600}",
  "\u{1F468}\u200d\u{1F469}\u200d\u{1F467}",
  "\u{10FFFF}",
  "\uffff",
  "\ufffe",
  "\ufdd0",
  "e\u0301", // composes under NFC
  "\u0301", // a combining mark on its own
  "\u0323\u0307", // two marks whose order NFC fixes
  "\u1100\u1161", // Hangul jamo that compose
  "\u212b", // ANGSTROM SIGN, which NFC maps to Å
  "\u0958", // composition exclusion: NFC makes two code points of it
  "\ufb2c", // NFC makes three code points of it
  "\u4e2d",
];

const visibleCodePoint = fc
  .integer({ min: 0x20, max: 0x10ffff })
  .filter((c) => !(c >= 0x7f && c <= 0x9f) && !(c >= 0xd800 && c <= 0xdfff))
  .map((c) => String.fromCodePoint(c));

const descriptionUnit = fc.oneof(
  { arbitrary: fc.constantFrom(...TRICKY_TEXT), weight: 6 },
  { arbitrary: fc.constantFrom(..."abcXYZ 019"), weight: 3 },
  { arbitrary: visibleCodePoint, weight: 2 },
);

// Drops units from the end until the description fits: a valid description by construction,
// often right at the 500-rune limit.
function fitDescription(units: string[]): string {
  let n = units.length;
  for (;;) {
    const raw = units.slice(0, n).join("");
    const folded = raw.normalize("NFC").replace(/[\s\u0085]+/gu, " ").trim();
    const excess = runes(folded) - MAX_DESCRIPTION_RUNES;
    if (excess <= 0) return raw;
    n -= Math.max(1, Math.floor(excess / 3));
  }
}

const description = fc
  .oneof(
    fc.array(descriptionUnit, { maxLength: 12 }),
    fc.array(descriptionUnit, { maxLength: 120 }),
    fc.array(descriptionUnit, { minLength: 480, maxLength: 560 }),
  )
  .map(fitDescription);

const CONTENT_PREFIXES = [
  "",
  "---\n",
  "---\ndescription: forged\n---\n",
  "\n---\n",
  "\ufeff",
  "\ufeff---\n",
  "\r\n",
  "\u0000",
  "-",
];

const contentUnit = fc.oneof(
  { arbitrary: fc.constantFrom(...TRICKY_TEXT), weight: 4 },
  {
    arbitrary: fc.constantFrom("---\n", "\n---\n", "\n---", "\u0000", "\u0007", "\u001b", "\u007f"),
    weight: 2,
  },
  { arbitrary: fc.constantFrom(..."abc \n"), weight: 3 },
  { arbitrary: visibleCodePoint, weight: 1 },
  { arbitrary: fc.integer({ min: 0, max: 0x9f }).map((c) => String.fromCharCode(c)), weight: 1 },
);

const content = fc
  .tuple(
    fc.constantFrom(...CONTENT_PREFIXES),
    fc.oneof(fc.array(contentUnit, { maxLength: 20 }), fc.array(contentUnit, { maxLength: 400 })),
  )
  .map(([prefix, units]) => prefix + units.join(""));

function roundTrips(description: string, content: string): void {
  const text = serializeEntry(description, content);
  const expected = { description: normalizeDescription(description), content };
  assert.deepEqual(parseEntry(text), expected);
  const stored = ENCODER.encode(text);
  assert.deepEqual(parseEntry(stored), expected);
  // The body is stored verbatim: the entry's last bytes are the body's bytes.
  const body = ENCODER.encode(content);
  assert.deepEqual(stored.subarray(stored.length - body.length), body);
}

Deno.test("serializeEntry() then parseEntry() round-trips every valid entry exactly", () => {
  fc.assert(fc.property(description, content, roundTrips), { numRuns: RUNS * 2 });
});

Deno.test("the description generator reaches the limit and the tricky characters", () => {
  const samples = fc.sample(description, { numRuns: 2_000, seed: 11 });
  assert.ok(
    samples.some((d) => runes(normalizeDescription(d)) === MAX_DESCRIPTION_RUNES),
    "no description of exactly the limit",
  );
  for (const ch of TRICKY_TEXT) {
    assert.ok(samples.some((d) => d.includes(ch)), `no description holds ${JSON.stringify(ch)}`);
  }
});

Deno.test("a file store round-trips every valid entry exactly", async () => {
  // One store, one fresh key per run; each run deletes its key, so the store stays small and far
  // from the entry cap however many runs shrinking adds. `durable: false` only skips the fsyncs,
  // which change nothing in what is written or read back and would double the run time on a
  // shared machine; the conformance suite exercises the durable default.
  await using tmp = await tempDir("agentmem-prop-");
  const dir = tmp.path;
  const store = await openFileStore({ dir, durable: false });
  let run = 0;
  await fc.assert(
    fc.asyncProperty(description, content, async (description, content) => {
      const key = `k${run++}`;
      const expected = { description: normalizeDescription(description), content };
      await store.create(key, description, content);
      assert.deepEqual(await store.read(key), expected);
      assert.deepEqual(await store.list(), [{ key, description: expected.description }]);
      await store.update(key, description, content + "\n---\n");
      assert.equal((await store.read(key)).content, content + "\n---\n");
      assert.equal(await store.delete(key), true);
    }),
    { numRuns: RUNS },
  );
  // Nothing but the store's own history of those writes, and its bookkeeping.
  assert.deepEqual(
    [...Deno.readDirSync(dir)].filter((e) => !isBookkeepingName(e.name)),
    [],
    "the store left files behind",
  );
});

// ---------------------------------------------------------------------------------------------
// Size

// The header's share of MAX_ENTRY_BYTES: twice the description's worst case in bytes (500 runes
// of 4 bytes), plus 64 bytes of framing.
const HEADER_BUDGET = MAX_ENTRY_BYTES - MAX_CONTENT_BYTES;

// The costliest characters for a YAML header: escaped in double quotes (`"`, `\`), doubled in
// single quotes (`'`), or 4 bytes of UTF-8 (astral).
const EXPENSIVE = ['"', "\\", "'", "\u{1F600}", "\u{10FFFF}", "\uffff", ":", "#", "-"];

const expensiveDescription = fc
  .oneof(
    fc.array(fc.constantFrom(...EXPENSIVE), { minLength: 490, maxLength: 500 }),
    fc.array(fc.oneof(fc.constantFrom(...EXPENSIVE), descriptionUnit), { maxLength: 520 }),
  )
  .map(fitDescription);

// A body of exactly `size` UTF-8 bytes that starts with awkward text.
const sizedContent = fc
  .tuple(content, fc.integer({ min: 0, max: MAX_CONTENT_BYTES }))
  .map(([start, size]) => {
    let head = start;
    while (bytes(head) > size) head = [...head].slice(0, -1).join("");
    return head + "x".repeat(size - bytes(head));
  });

function checkSize(description: string, content: string): void {
  const entry = bytes(serializeEntry(description, content));
  const header = entry - bytes(content);
  assert.ok(entry <= MAX_ENTRY_BYTES, `${entry} bytes is over MAX_ENTRY_BYTES`);
  assert.ok(header <= HEADER_BUDGET, `a header of ${header} bytes is over ${HEADER_BUDGET}`);
  // The tighter bound the budget is built from: escaping at most doubles the description.
  const limit = 2 * bytes(normalizeDescription(description)) + 64;
  assert.ok(header <= limit, `a header of ${header} bytes is over ${limit}`);
}

Deno.test("no valid entry serializes to more than MAX_ENTRY_BYTES", () => {
  fc.assert(
    fc.property(fc.oneof(description, expensiveDescription), sizedContent, checkSize),
    { numRuns: RUNS },
  );
});

Deno.test("the worst-case entry fits MAX_ENTRY_BYTES and round-trips", () => {
  const full = [
    "x".repeat(MAX_CONTENT_BYTES),
    "\u{1F600}".repeat(MAX_CONTENT_BYTES / 4),
    "\u0000".repeat(MAX_CONTENT_BYTES),
    "---\n" + "\u00e9".repeat((MAX_CONTENT_BYTES - 4) / 2),
  ];
  for (const body of full) assert.equal(bytes(body), MAX_CONTENT_BYTES);
  const n = MAX_DESCRIPTION_RUNES;
  const worst = [
    ...EXPENSIVE.map((ch) => ch.repeat(n)),
    '"\\'.repeat(n / 2),
    "'\"".repeat(n / 2),
    "\"'\\\u{1F600}".repeat(n / 4),
    '\u{1F600}"'.repeat(n / 2),
    "- " + "#".repeat(n - 2),
    "\\" + "\u{10FFFF}".repeat(n - 1),
    "'" + "\u{1F600}".repeat(n - 2) + '"',
  ];
  for (const description of worst) {
    assert.equal(runes(normalizeDescription(description)), n, JSON.stringify(description));
    for (const body of full) {
      checkSize(description, body);
      roundTrips(description, body);
    }
  }
});

Deno.test("no code point costs more than twice its UTF-8 bytes in a header", () => {
  // Every Basic Multilingual Plane code point and a stride through the rest, each in the most
  // escaping context (double quotes, forced by both quote characters).
  const base = "'\"";
  const baseCost = bytes(serializeEntry(base, "")) - 2 * bytes(base);
  assert.ok(baseCost <= 64);
  for (let c = 0; c <= 0x10ffff; c += c < 0x10000 ? 1 : 97) {
    const ch = String.fromCodePoint(c);
    let normalized: string;
    try {
      normalized = normalizeDescription(base + ch);
    } catch (e) {
      assert.ok(e instanceof InvalidDescriptionError);
      continue;
    }
    const header = bytes(serializeEntry(base + ch, ""));
    assert.ok(
      header - 2 * bytes(normalized) <= baseCost,
      `U+${c.toString(16)} costs ${header - baseCost} bytes`,
    );
  }
});

// ---------------------------------------------------------------------------------------------
// Description normalization

const rawDescription = fc
  .tuple(
    fc.array(
      fc.oneof(
        { arbitrary: descriptionUnit, weight: 8 },
        {
          arbitrary: fc.integer({ min: 0, max: 0x9f }).map((c) => String.fromCharCode(c)),
          weight: 1,
        },
        { arbitrary: loneSurrogate, weight: 1 },
      ),
      { maxLength: 40 },
    ),
    fc.integer({ min: 0, max: 3 }),
  )
  .map(([units, mode]) => {
    const s = units.join("");
    // Occasionally long, to cross the rune limit.
    return mode === 3 ? s + "x".repeat(MAX_DESCRIPTION_RUNES - 5) : s;
  });

const WHITE = /^[\s\u0085]|[\s\u0085]$/u;
const LINE_BREAK = /[\n\r\v\f\u0085\u2028\u2029]/u;
// deno-lint-ignore no-control-regex
const CONTROL_CHAR = /[\u0000-\u001f\u007f-\u009f]/u;
// A control character that normalization does not fold into a space.
// deno-lint-ignore no-control-regex
const UNFOLDED_CONTROL = /[\u0000-\u0008\u000e-\u001f\u007f-\u0084\u0086-\u009f]/u;

Deno.test("normalizeDescription() is idempotent and yields one trimmed NFC line", () => {
  fc.assert(
    fc.property(rawDescription, (raw) => {
      // A lone surrogate or an unfolded control character must be refused; length may be.
      const mustRefuse = !raw.isWellFormed() || UNFOLDED_CONTROL.test(raw);
      const mayRefuse = mustRefuse || runes(raw.normalize("NFC")) > MAX_DESCRIPTION_RUNES;
      let out: string;
      try {
        out = normalizeDescription(raw);
      } catch (e) {
        assert.ok(e instanceof InvalidDescriptionError, `threw ${e}`);
        assert.ok(mayRefuse, `refused ${JSON.stringify(raw)}`);
        return;
      }
      assert.ok(!mustRefuse, `accepted ${JSON.stringify(raw)}`);
      assert.equal(normalizeDescription(out), out);
      assert.equal(out, out.normalize("NFC"));
      assert.ok(!CONTROL_CHAR.test(out), JSON.stringify(out));
      assert.ok(!LINE_BREAK.test(out), JSON.stringify(out));
      assert.ok(!WHITE.test(out), JSON.stringify(out));
      assert.ok(!/[\s\u0085]{2}/u.test(out) && !/[^\S ]/u.test(out), JSON.stringify(out));
      assert.ok(runes(out) <= MAX_DESCRIPTION_RUNES);
    }),
    { numRuns: RUNS * 2 },
  );
});

// ---------------------------------------------------------------------------------------------
// Scope

const namespace = fc.oneof(
  fc.constantFrom("", "file:", "jetstream:notes/alice", "__proto__", "constructor", "toString"),
  fc.string({ unit: "binary", maxLength: 12 }),
);
const scopeKey = fc.oneof(
  {
    arbitrary: fc.constantFrom("__proto__", "constructor", "hasOwnProperty", "a", "a.b"),
    weight: 2,
  },
  { arbitrary: legalKey, weight: 2 },
  { arbitrary: anyKey, weight: 1 },
);
const revision = fc.oneof(
  fc.nat({ max: 1_000 }),
  fc.constantFrom(0, -0, 1, Number.MAX_SAFE_INTEGER),
  fc.maxSafeNat(),
);

type Op = readonly ["record", string, string, number] | readonly ["forget", string, string];
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.tuple(fc.constant("record" as const), namespace, scopeKey, revision), weight: 4 },
  { arbitrary: fc.tuple(fc.constant("forget" as const), namespace, scopeKey), weight: 1 },
);

// Applies the operations to a scope and to a plain model of it.
function build(ops: readonly Op[]): { scope: Scope; model: Map<string, Map<string, number>> } {
  const scope = new Scope();
  const model = new Map<string, Map<string, number>>();
  for (const o of ops) {
    if (o[0] === "record") {
      // An illegal key is refused at once, so that every snapshot can be restored.
      if (!isLegalKey(o[2])) {
        assert.throws(() => scope.record(o[1], o[2], o[3]), InvalidKeyError);
        continue;
      }
      scope.record(o[1], o[2], o[3]);
      if (!model.has(o[1])) model.set(o[1], new Map());
      // -0 is recorded as 0, the value a snapshot holds once it has been through JSON.
      model.get(o[1])!.set(o[2], Object.is(o[3], -0) ? 0 : o[3]);
    } else {
      scope.forget(o[1], o[2]);
      model.get(o[1])?.delete(o[2]);
    }
  }
  return { scope, model };
}

function assertMatches(scope: Scope, model: Map<string, Map<string, number>>): void {
  let size = 0;
  for (const [ns, keys] of model) {
    for (const [key, rev] of keys) {
      assert.equal(scope.revision(ns, key), rev, `${JSON.stringify(ns)} ${key}`);
      size++;
    }
  }
  assert.equal(scope.size, size);
}

Deno.test("Scope.restore() of a snapshot sent through JSON keeps every revision", () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
      const { scope, model } = build(ops);
      assertMatches(scope, model);
      const snapshot = scope.snapshot();
      assert.equal(snapshot.kind, SCOPE_SNAPSHOT_KIND);
      assert.equal(snapshot.version, SCOPE_SNAPSHOT_VERSION);
      const restored = Scope.restore(JSON.parse(JSON.stringify(snapshot)));
      assertMatches(restored, model);
      assert.deepEqual(restored.snapshot(), snapshot);
      // Restoring from JSON text works the same way.
      assertMatches(Scope.restore(JSON.stringify(snapshot)), model);
    }),
    { numRuns: RUNS },
  );
});

// Records that are not valid snapshots, each paired with nothing (it must be skipped).
function damaged(snapshot: ScopeSnapshot): fc.Arbitrary<unknown> {
  const json = JSON.stringify(snapshot);
  const someKey = Object.values(snapshot.revisions).flatMap((keys) => Object.keys(keys))[0];
  const withRevision = (value: unknown) =>
    someKey === undefined ? { ...snapshot, version: 0 } : {
      ...snapshot,
      revisions: { ...snapshot.revisions, ns: { [someKey]: value } },
    };
  return fc.constantFrom<unknown>(
    { ...snapshot, kind: "agentmem.scopes" },
    { ...snapshot, version: SCOPE_SNAPSHOT_VERSION + 1 },
    { ...snapshot, version: String(SCOPE_SNAPSHOT_VERSION) },
    { ...snapshot, extra: true },
    { ...snapshot, revisions: [] },
    { ...snapshot, revisions: null },
    { kind: snapshot.kind, version: snapshot.version },
    { ...snapshot, revisions: { ...snapshot.revisions, ns: { "../x": 1 } } },
    { ...snapshot, revisions: { ...snapshot.revisions, ns: ["a"] } },
    withRevision(-1),
    withRevision(1.5),
    withRevision("7"),
    withRevision(null),
    withRevision(Number.MAX_SAFE_INTEGER + 1),
    json.slice(0, -1),
    json + "x",
    `[${json}]`,
  );
}

const junk: fc.Arbitrary<unknown> = fc
  .anything()
  .filter((v) => !(typeof v === "object" && v !== null && "kind" in v));

type Journal = { records: unknown[]; newest: Scope | undefined };
const journal: fc.Arbitrary<Journal> = fc
  .array(
    fc.oneof(
      { arbitrary: junk.map((r) => ({ record: r, valid: undefined })), weight: 3 },
      {
        arbitrary: fc.tuple(fc.array(op, { maxLength: 8 }), fc.boolean()).map(([ops, asText]) => {
          const scope = build(ops).scope;
          const snapshot = scope.snapshot();
          // Text is never taken for a snapshot: a model can write text shaped like one.
          return {
            record: asText ? JSON.stringify(snapshot) : snapshot,
            valid: asText ? undefined : scope,
          };
        }),
        weight: 2,
      },
      {
        arbitrary: fc.array(op, { minLength: 1, maxLength: 8 }).chain((ops) =>
          damaged(build(ops).scope.snapshot()).map((r) => ({ record: r, valid: undefined }))
        ),
        weight: 2,
      },
    ),
    { maxLength: 12 },
  )
  .map((entries) => {
    const newest = entries.findLast((e) => e.valid !== undefined)?.valid;
    // Taint is sticky: an earlier tainted snapshot of the same run taints the result.
    if (
      newest !== undefined &&
      entries.some((e) => e.valid?.run === newest.run && e.valid.tainted)
    ) newest.taint();
    return { records: entries.map((e) => e.record), newest };
  });

Deno.test("latestScope() restores the newest valid snapshot among junk records", () => {
  fc.assert(
    fc.property(journal, ({ records, newest }) => {
      // With no valid snapshot the result is a fresh scope, whose run id is a new random one.
      const comparable = (s: Scope) =>
        newest === undefined ? { ...s.snapshot(), run: "fresh" } : s.snapshot();
      const scope = latestScope(records);
      assert.deepEqual(comparable(scope), comparable(newest ?? new Scope()));
      // Any iterable will do, not only an array.
      assert.deepEqual(comparable(latestScope(records.values())), comparable(scope));
    }),
    { numRuns: RUNS },
  );
});

// The parser's reading of a header line, for comparison with the fast path.
function yamlDescription(line: string): unknown {
  try {
    const value = parse(line, { schema: "core" });
    return value !== null && typeof value === "object"
      ? (value as Record<string, unknown>).description
      : undefined;
  } catch {
    return undefined;
  }
}

const headerScalar = fc.oneof(
  // Hand-written scalars: anything, including indicators, quotes, escapes and keywords.
  fc.string({ unit: descriptionUnit, maxLength: 40 }),
  fc.constantFrom(
    "null",
    "NULL",
    "True",
    "false",
    "~",
    "0x1F",
    "1e3",
    ".inf",
    "-",
    "- a",
    "a: b",
    "a #b",
  ),
  fc.string({ unit: descriptionUnit, maxLength: 30 }).map((s) => `"${s}"`),
  fc.string({ unit: descriptionUnit, maxLength: 30 }).map((s) => `'${s}'`),
  // What the serializer writes.
  description.map((d) =>
    stringify({ description: d }, { lineWidth: 0 }).slice("description: ".length, -1)
  ),
);

Deno.test("readCanonicalHeader() reads a header exactly as the YAML parser does, or defers to it", () => {
  let fast = 0;
  fc.assert(
    fc.property(headerScalar, (scalar) => {
      const line = `description: ${scalar}\n`;
      const quick = readCanonicalHeader(line);
      if (quick === undefined) return;
      fast++;
      assert.equal(quick, yamlDescription(line), JSON.stringify(line));
    }),
    { numRuns: RUNS * 5 },
  );
  // The fast path must actually be taken, and for every everyday description the serializer writes.
  assert.ok(fast > RUNS / 10, `fast path taken ${fast} times`);
  for (
    const d of [
      "Prefers tea over coffee",
      "deploy: staging first, then prod",
      "caf\u00e9 au lait \u{1F600} and [brackets] {braces}, commas",
      'It\'s "quoted" here',
      "#1 priority",
      "- starts with a dash",
      "2024 plans",
    ]
  ) {
    const line = stringify({ description: d }, { lineWidth: 0 });
    const quick = readCanonicalHeader(line);
    if (!d.includes('"') && !d.includes("'")) assert.equal(quick, d, line);
  }
  assert.equal(readCanonicalHeader("description: true\n"), undefined);
  assert.equal(readCanonicalHeader('description: "esc\\n"\n'), undefined);
});

Deno.test("serializeEntry() writes a header the YAML parser itself reads back exactly", () => {
  fc.assert(
    fc.property(description, (d) => {
      const text = serializeEntry(d, "body");
      const end = text.indexOf("\n---\n", 3);
      const header = parse(text.slice(4, end + 1), { schema: "core" });
      assert.deepEqual(header, { description: normalizeDescription(d) });
    }),
    { numRuns: RUNS * 2 },
  );
});

// Bytes that are UTF-8, or nearly: well-formed pieces (U+FFFD's own bytes among them), and stray
// bytes that break a sequence.
const nearlyUtf8 = fc.array(
  fc.oneof(
    { arbitrary: anyCodePoint.map((c) => [...ENCODER.encode(c)]), weight: 6 },
    { arbitrary: fc.constant([0xef, 0xbf, 0xbd]), weight: 2 },
    { arbitrary: fc.integer({ min: 0x80, max: 0xff }).map((b) => [b]), weight: 1 },
  ),
  { maxLength: 40 },
).map((parts) => new Uint8Array(parts.flat()));

Deno.test("parseEntry() of bytes reads them exactly as a strict UTF-8 decoder does", () => {
  const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const header = ENCODER.encode("---\ndescription: d\n---\n");
  let refused = 0;
  fc.assert(
    fc.property(nearlyUtf8, (body) => {
      const bytes = new Uint8Array([...header, ...body]);
      let expected: string | undefined;
      try {
        expected = strict.decode(body);
      } catch {
        expected = undefined;
      }
      let got: string | undefined;
      try {
        got = parseEntry(bytes, "k").content;
      } catch (e) {
        assert.match((e as Error).message, /not valid UTF-8/);
        refused++;
      }
      assert.equal(got, expected);
    }),
    { numRuns: RUNS },
  );
  assert.ok(refused > 0 && refused < RUNS, `${refused} of ${RUNS} refused`);
});
