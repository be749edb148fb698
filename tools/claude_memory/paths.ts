/**
 * The paths Claude's memory tool shows for the store's keys, and the keys of its paths: one
 * reversible mapping, the one `anthropicMemoryHandlers` uses.
 *
 * @module
 */

import { InvalidKeyError } from "../../store/errors.ts";
import { validateKey } from "../../store/validate.ts";
import { keyOf, parsePath, pathOf } from "./_paths.ts";

/**
 * The path under `/memories` at which Claude's memory tool shows the memory `key`: the key's
 * `=`-separated parts are folders and a file, the file shown with `.md` added (or as named, when
 * the key ends with `=`). A key whose parts make no legal path (`a==b`, `a=.x`) is one file named
 * as the key. Every key has exactly one path.
 *
 * @example
 * ```ts
 * import { claudeMemoryPath } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * assert.equal(claudeMemoryPath("user.preferences"), "/memories/user.preferences.md");
 * assert.equal(claudeMemoryPath("projects=acme"), "/memories/projects/acme.md");
 * assert.equal(claudeMemoryPath("notes.txt="), "/memories/notes.txt");
 * ```
 *
 * @param key A legal key.
 * @returns Its path.
 * @throws {InvalidKeyError} when `key` is not a legal key.
 */
export function claudeMemoryPath(key: string): string {
  return pathOf(validateKey(key));
}

/**
 * The key of the file Claude's memory tool names by `path`: the inverse of `claudeMemoryPath`.
 * No two paths have one key.
 *
 * @example
 * ```ts
 * import { claudeMemoryKey } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * assert.equal(claudeMemoryKey("/memories/projects/acme.md"), "projects=acme");
 * assert.equal(claudeMemoryKey("/memories/x.md"), "x");
 * assert.throws(() => claudeMemoryKey("/memories/../etc/passwd"), /not a legal memory path/);
 * ```
 *
 * @param path A path under `/memories` that names a file.
 * @returns Its key.
 * @throws {InvalidKeyError} when `path` is not the path of any key, saying what is legal.
 */
export function claudeMemoryKey(path: string): string {
  try {
    return keyOf(parsePath(path));
  } catch (e) {
    throw new InvalidKeyError((e as Error).message, { cause: e });
  }
}
