// The one mapping between the paths Claude's memory tool names and the store's keys, both ways.
// `pathOf` is total over legal keys; `keyOf` inverts it and refuses every path that is not some
// key's path, so no two paths meet in one key and every key has exactly one path. The rules, with
// examples, are in docs/claude-memory.md ("Paths and keys").

import { MAX_KEY_RUNES } from "../../store/limits.ts";
import { quote } from "../../store/text.ts";
import { isLegalKey } from "../_memory_tool.ts";
import { CommandError } from "./_files.ts";

/** The directory the model's paths live under. */
export const ROOT = "/memories";
/** What joins folder names and the file name in a key; no name in a path may hold it. */
export const SEPARATOR = "=";
/** The most names (folders and the file) a path holds. */
export const MAX_NAMES = 8;
/** The extension a file shows with when its key names none: `x` is `/memories/x.md`. */
const MD = ".md";

/** What a legal path looks like, for the model. */
export const LEGAL_PATH = `a path is ${ROOT}/ then at most ${MAX_NAMES - 1} folders and a file ` +
  `name joined by single slashes, such as ${ROOT}/projects/acme.md; each name is letters, ` +
  `digits, ".", "_" and "-" (not starting with ".", no ".."), a folder's name does not end in ` +
  `${MD}, and the names joined (less a file's ${MD}) take at most ${MAX_KEY_RUNES} characters`;

// One name of a path: the key charset less the separator, not hidden, no "..".
const NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

function legalName(name: string): boolean {
  return NAME.test(name) && !name.includes("..");
}

function legalFolder(name: string): boolean {
  return legalName(name) && !name.endsWith(MD);
}

/** A path the model named: the directory, or names under it (`slash`: it ended with "/"). */
export type MemoryPath =
  | { readonly root: true; readonly path: string }
  | {
    readonly root: false;
    readonly path: string;
    readonly names: readonly string[];
    readonly slash: boolean;
  };

/**
 * The path of `key` (a legal key): its `=`-separated parts are folders and a file; the file is
 * shown with `.md` added, or as named when the key ends with `=`. A key whose parts are no path
 * (an empty part, a hidden name, a folder ending in `.md`, too deep) is one file named as the key.
 */
export function pathOf(key: string): string {
  const parts = key.split(SEPARATOR);
  const verbatim = parts.length > 1 && parts.at(-1) === "";
  const names = verbatim ? parts.slice(0, -1) : [...parts.slice(0, -1), `${parts.at(-1)}${MD}`];
  const file = names.at(-1)!;
  const clean = names.length <= MAX_NAMES && names.slice(0, -1).every(legalFolder) &&
    legalName(file) && !(verbatim && file.endsWith(MD));
  return `${ROOT}/${clean ? names.join("/") : key}`;
}

/**
 * Reads a path's syntax: `/memories` (or `/memories/`) is the directory; anything else must be
 * names under it, each legal, joined by single slashes, at most `MAX_NAMES`. Throws a
 * `CommandError` saying what is legal otherwise.
 */
export function parsePath(path: unknown): MemoryPath {
  if (typeof path !== "string") {
    throw new CommandError(`Path must be a string starting with ${ROOT}, got ${typeof path}`);
  }
  if (path === ROOT || path === `${ROOT}/`) return { root: true, path: ROOT };
  if (!path.startsWith(`${ROOT}/`)) {
    throw new CommandError(`Path must start with ${ROOT}/, got: ${quote(path)}`);
  }
  const slash = path.endsWith("/");
  const names = path.slice(ROOT.length + 1, slash ? -1 : undefined).split("/");
  const refuse = (why: string) =>
    new CommandError(`The path ${quote(path)} is not a legal memory path (${why}): ${LEGAL_PATH}`);
  if (names.some((n) => n === "")) throw refuse(`it has an empty name, as in "//"`);
  if (names.some((n) => n === "." || n === "..")) throw refuse(`it has a "." or ".." name`);
  if (names.length > MAX_NAMES) throw refuse(`it is ${names.length} names deep`);
  // A single name holding "=" is a key that has no other path (see pathOf); keyOf checks it.
  const raw = names.length === 1 && names[0]!.includes(SEPARATOR) && /^[^.]/.test(names[0]!);
  const bad = names.find((n) => !legalName(n));
  if (bad !== undefined && !raw) throw refuse(`the name ${quote(bad)} is not legal`);
  const folder = names.slice(0, -1).find((n) => !legalFolder(n));
  if (folder !== undefined) throw refuse(`the folder ${quote(folder)} is named like a file`);
  return { root: false, path: `${ROOT}/${names.join("/")}`, names, slash };
}

/** The key of the file `p` names; throws a `CommandError` when no key has that path. */
export function keyOf(p: MemoryPath): string {
  if (p.root) throw new CommandError(`The path ${ROOT} is a directory, not a file.`);
  if (p.slash) throw new CommandError(`The path ${p.path}/ names a folder, not a file.`);
  const file = p.names.at(-1)!;
  const folders = p.names.slice(0, -1);
  const key = p.names.length === 1 && file.includes(SEPARATOR)
    ? file
    : [...folders, file.endsWith(MD) ? file.slice(0, -MD.length) : `${file}${SEPARATOR}`]
      .join(SEPARATOR);
  const runes = [...key].length;
  if (runes > MAX_KEY_RUNES) {
    throw new CommandError(
      `The path ${quote(p.path)} is too long: its names joined take ${runes} characters, and ` +
        `the most is ${MAX_KEY_RUNES}. Use shorter names or fewer folders`,
    );
  }
  if (!isLegalKey(key) || pathOf(key) !== p.path) {
    throw new CommandError(`The path ${quote(p.path)} is not a legal memory path: ${LEGAL_PATH}`);
  }
  return key;
}

/**
 * The names of the folder `p` names (none for the directory), or `undefined` when it cannot be a
 * folder (a name ending in `.md`, or a key's own one-name path).
 */
export function folderOf(p: MemoryPath): readonly string[] | undefined {
  if (p.root) return [];
  return p.names.every(legalFolder) ? p.names : undefined;
}
