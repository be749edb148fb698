// The mapping between Claude's memory-tool paths and keys is a bijection between legal keys and
// the paths it accepts: every key has exactly one path and comes back from it, and a path that
// maps to a key is that key's one path, so no two paths meet in one key (and, since a path maps
// to one key, no two keys share a path). The documented examples hold as written.

import assert from "node:assert/strict";
import fc from "fast-check";
import { claudeMemoryKey, claudeMemoryPath, InvalidKeyError } from "../../mod.ts";

// The key rules (DESIGN "Keys"), stated here apart from the library's check.
function legal(key: string): boolean {
  return /^[A-Za-z0-9._=-]{1,200}$/.test(key) && !/^\.|\.$|\.\./.test(key);
}

// Fragments that make the shapes that matter: separators in a row or at an end, dots, ".md" in
// folders and files, hidden names, long names.
const KEY_PARTS = ["a", "B", "7", "=", "==", ".", ".md", "md", "-", "_", "x".repeat(60)];
const key = fc.array(fc.constantFrom(...KEY_PARTS), { minLength: 1, maxLength: 12 })
  .map((parts) => parts.join(""))
  .filter(legal);
const PATH_PARTS = [...KEY_PARTS, "/", "//", "..", "/.", " ", "é", "\\"];
const path = fc.array(fc.constantFrom(...PATH_PARTS), { maxLength: 14 })
  .map((parts) => `/memories/${parts.join("")}`);

Deno.test("claudeMemoryKey(claudeMemoryPath(key)) is the key, for every legal key", () => {
  fc.assert(
    fc.property(key, (k) => {
      const p = claudeMemoryPath(k);
      assert.ok(p.startsWith("/memories/"), p);
      assert.equal(claudeMemoryKey(p), k, p);
    }),
    { numRuns: 5_000 },
  );
});

Deno.test("a path that maps to a key is that key's one path; any other is refused, saying what is legal", () => {
  let mapped = 0;
  fc.assert(
    fc.property(fc.oneof(path, key.map(claudeMemoryPath)), (p) => {
      let k: string;
      try {
        k = claudeMemoryKey(p);
      } catch (e) {
        assert.ok(e instanceof InvalidKeyError, String(e));
        assert.match(
          e.message,
          /a path is \/memories\/ then|the most is 200|is a directory|names a folder|must start/,
        );
        return;
      }
      mapped++;
      assert.equal(claudeMemoryPath(k), p);
    }),
    { numRuns: 5_000 },
  );
  assert.ok(mapped > 1_000, `only ${mapped} paths mapped`);
});

Deno.test("claudeMemoryPath() and claudeMemoryKey() map the documented examples", () => {
  const examples: [string, string][] = [
    ["/memories/user.md", "user"],
    ["/memories/projects/acme.md", "projects=acme"],
    ["/memories/projects/2025/q3.notes.md", "projects=2025=q3.notes"],
    ["/memories/notes.txt", "notes.txt="],
    ["/memories/projects/todo", "projects=todo="],
    ["/memories/user.preferences.md", "user.preferences"],
    ["/memories/x.md.md", "x.md"],
    ["/memories/a==b", "a==b"],
    ["/memories/a=.hidden", "a=.hidden"],
    ["/memories/notes.md=x", "notes.md=x"],
    // A file named x.md kept as named would be the key x.md=, whose path is then its own.
    ["/memories/x.md=", "x.md="],
  ];
  for (const [p, k] of examples) {
    assert.equal(claudeMemoryKey(p), k, p);
    assert.equal(claudeMemoryPath(k), p, k);
  }
  for (const p of ["/memories/a=b", "/memories/a/=b.md", "/memories/a/", "/memories/a.md/b"]) {
    assert.throws(() => claudeMemoryKey(p), InvalidKeyError, p);
  }
  assert.throws(() => claudeMemoryPath("a/b"), InvalidKeyError);
});
