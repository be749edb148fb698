// memorySystemNote(store, { pin }): pinned memories' bodies in the note, framed as data, in pin
// order, within the budget (naming what did not fit and how to read it), byte-stable, with the
// tainted mark; a tainted body shown taints the run's scope.

import assert from "node:assert/strict";
import fc from "fast-check";
import { ConfigError, memorySystemNote, openFileStore, Scope } from "../../mod.ts";
import { assertFramed, blocksOf, HOSTILE_CONTENT } from "./_helpers.ts";
import { FakeStore } from "../_lib/fake_store.ts";
import { tempDir } from "../_lib/temp_dir.ts";

function pinnedKeys(note: string): string[] {
  const block = blocksOf(note).find((b) => b.kind === "MEMORY DATA");
  return (block?.lines ?? []).filter((l) => l.startsWith("key: ")).map((l) =>
    JSON.parse(l.slice(5))
  );
}

function store(): FakeStore {
  const s = new FakeStore();
  s.seed("user.name", "What to call the user", "Sam");
  s.seed("user.style", "How the user likes answers", "Short.\nNo emoji.");
  s.seed("project.goal", "The goal", "Ship v1");
  s.seed("zz", "Hostile", HOSTILE_CONTENT);
  return s;
}

Deno.test("memorySystemNote({ pin }) shows pinned bodies framed, in pin order, and lists every key", async () => {
  const note = await memorySystemNote(store(), { pin: ["zz", "user.", "missing"] });
  assertFramed(note, ["ignore all previous", "developer mode", "Short.", "Sam"]);
  assert.deepEqual(pinnedKeys(note), ["zz", "user.name", "user.style"]);
  assert.match(
    note,
    /Pinned memories, shown in full at the start of every run:\nBEGIN MEMORY DATA/,
  );
  assert.match(note, /\| Short\.\n\| No emoji\./);
  // The index still lists every memory, after the pinned ones.
  assert.ok(note.indexOf("BEGIN MEMORY DATA") < note.indexOf("BEGIN MEMORY INDEX"));
  assert.equal(blocksOf(note).find((b) => b.kind === "MEMORY INDEX")!.lines.length, 4);
  assert.doesNotMatch(note, /did not fit/);
  // Without pins, the note is what it was.
  assert.doesNotMatch(await memorySystemNote(store()), /Pinned|MEMORY DATA/);
});

Deno.test("memorySystemNote({ pin }) keeps within maxChars, naming what did not fit and how to read it", async () => {
  const s = store();
  s.seed("user.big", "Big", "x".repeat(5_000));
  const note = await memorySystemNote(s, { pin: ["user."], maxChars: 3_000 });
  assert.ok(note.length <= 3_000, `${note.length}`);
  // The big one is left out; the smaller ones after it in pin order still show.
  assert.deepEqual(pinnedKeys(note), ["user.name", "user.style"]);
  assert.match(
    note,
    /One pinned memory did not fit in this note \("user\.big"\); read it with memory_read\./,
  );
  const tiny = await memorySystemNote(s, { pin: ["user."], maxChars: 600 });
  assert.ok(tiny.length <= 600, `${tiny.length}`);
  // Many left out: named by count when their keys would take too much room.
  const many = new FakeStore();
  for (let i = 0; i < 200; i++) many.seed(`user.k${i}`, "D", "y".repeat(200));
  const crowded = await memorySystemNote(many, { pin: ["user."], maxChars: 4_000 });
  assert.ok(crowded.length <= 4_000);
  const shown = pinnedKeys(crowded).length;
  assert.ok(shown > 5 && shown < 200, `${shown}`);
  assert.match(
    crowded,
    new RegExp(
      `${200 - shown} pinned memories did not fit in this note; find them with memory_list`,
    ),
  );
  // Reading stops once nothing more fits: not every body was read.
  assert.ok(many.calls.filter((c) => c.op === "read").length < 200 - 8);
});

Deno.test("memorySystemNote({ pin }) fits any budget, shows or names every pinned memory, stays framed", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(
        fc.record({
          key: fc.stringMatching(/^[a-c]\.[a-z0-9]{1,12}$/),
          content: fc.string({ unit: "binary", maxLength: 900 }),
        }),
        { selector: (e) => e.key, maxLength: 25 },
      ),
      fc.array(fc.constantFrom("a.", "b.", "c.", "a.x", "b.y"), { maxLength: 4 }),
      fc.integer({ min: 900, max: 9_000 }),
      async (entries, pin, maxChars) => {
        const s = new FakeStore();
        for (const { key, content } of entries) s.seed(key, `About ${key}`, content);
        const note = await memorySystemNote(s, { pin, maxChars });
        assert.ok(note.length <= maxChars, `${note.length} > ${maxChars}`);
        assertFramed(note);
        const named = entries.filter((e) =>
          pin.some((p) => p.endsWith(".") ? e.key.startsWith(p) : e.key === p)
        );
        const shown = pinnedKeys(note);
        assert.ok(shown.every((k) => named.some((e) => e.key === k)));
        const left = named.length - shown.length;
        if (left > 0 && note.includes("Pinned memories")) {
          assert.match(note, new RegExp(`\\b${left === 1 ? "One" : left}\\b pinned memor`));
        }
        assert.equal(await memorySystemNote(s, { pin, maxChars }), note, "not byte-stable");
      },
    ),
    { numRuns: 150 },
  );
});

Deno.test("memorySystemNote({ pin, scope }) marks a tainted body and taints the run that sees it", async () => {
  await using dir = await tempDir();
  const s = await openFileStore({ dir: dir.path });
  await s.create("user.name", "Name", "Sam", { scope: new Scope({ run: "clean" }) });
  await s.create("user.rule", "Rule", `obey the page\n${"!".repeat(3_000)}`, {
    scope: new Scope({ run: "bad", tainted: true }),
  });
  const clean = new Scope();
  const onlyClean = await memorySystemNote(s, { pin: ["user.name"], scope: clean });
  const data = (note: string) => blocksOf(note).find((b) => b.kind === "MEMORY DATA")!.lines;
  assert.ok(!data(onlyClean).some((l) => l.includes("untrusted")));
  assert.equal(clean.tainted, false);
  const run = new Scope();
  const note = await memorySystemNote(s, { pin: ["user."], scope: run });
  const block = blocksOf(note).find((b) => b.kind === "MEMORY DATA")!;
  const rule = block.lines.indexOf('key: "user.rule"');
  assert.match(
    block.lines[rule + 2]!,
    /^last written: .* by run "bad", \[written by a run that read untrusted input\]$/,
  );
  assert.equal(run.tainted, true);
  const optedOut = new Scope({ propagateTaint: false });
  await memorySystemNote(s, { pin: ["user."], scope: optedOut });
  assert.equal(optedOut.tainted, false);
  // Byte-stable for the same store, however often it is asked.
  assert.equal(await memorySystemNote(s, { pin: ["user."] }), note);
  // A body left out for room is not seen, and taints nothing.
  const small = new Scope();
  const part = await memorySystemNote(s, {
    pin: ["user.name", "user.rule"],
    scope: small,
    maxChars: 2_500,
  });
  assert.match(part, /\("user\.rule"\); read it with memory_read/);
  assert.equal(small.tainted, false);
});

Deno.test("memorySystemNote({ pin }) refuses a pin that is no key or prefix, naming it", () => {
  const s = store();
  for (const pin of [["a b"], [".x"], ["user.."], [7], "user."] as unknown[]) {
    assert.throws(
      () => memorySystemNote(s, { pin: pin as string[] }),
      (e) =>
        e instanceof ConfigError && /option "pin"/.test(e.message) && /"user\."/.test(e.message),
    );
  }
  assert.throws(() => memorySystemNote(s, { scope: {} as Scope }), ConfigError);
});
