// The store seen as Claude's memory tool sees it: every memory at its path (`_paths.ts`), folders
// made of the paths' names, and the view of `/memories` or of a folder: two levels deep with
// sizes, as the SDK's filesystem tool lists a directory, within a character budget.

import type { Item, Version } from "../../store/types.ts";
import { listWithHeads } from "../../store/history.ts";
import { utf8Length } from "../../store/text.ts";
import { frame, oneLine, quoteKey } from "../_frame.ts";
import { listedItems } from "../_items.ts";
import { CommandError, formatSize } from "./_files.ts";
import { pathOf, ROOT } from "./_paths.ts";
import { plainCall, type Runner, storeError } from "./_commands.ts";
import { writerOf, writersOf } from "../_writers.ts";

/** A memory at its path, with the path's names (and its latest version, with history). */
export interface Placed extends Item {
  readonly path: string;
  readonly names: readonly string[];
  readonly version?: Version | undefined;
}

/** One line of a folder's view: a file, or a folder with how many files it holds. */
type Entry =
  | { readonly kind: "file"; readonly item: Placed; readonly path: string }
  | { readonly kind: "folder"; readonly path: string; files: number };

/** Every memory at its path, in the order a view shows them (name by name, as sorted names). */
export async function placedItems(run: Runner): Promise<Placed[]> {
  let items;
  let heads: ReadonlyMap<string, Version>;
  try {
    // With history, the newest version of each, from the same pass (who wrote it).
    const indexed = await listWithHeads(run.store);
    items = listedItems(indexed?.items ?? await run.store.list(plainCall(run)));
    heads = new Map((indexed?.heads ?? []).map((v) => [v.key, v]));
  } catch (e) {
    throw storeError(e, ROOT);
  }
  return items.map((i) => {
    const path = pathOf(i.key);
    return { ...i, path, names: path.slice(ROOT.length + 1).split("/"), version: heads.get(i.key) };
  }).sort((a, b) => compareNames(a.names, b.names));
}

function compareNames(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  }
  return a.length - b.length;
}

/** The memories inside the folder of `names` (at any depth). */
export function inside(items: readonly Placed[], names: readonly string[]): Placed[] {
  return items.filter((i) =>
    i.names.length > names.length && names.every((n, at) => i.names[at] === n)
  );
}

// What the view of a folder lists: its files and folders, and theirs, two levels deep.
function entriesOf(items: readonly Placed[], names: readonly string[], at: string): Entry[] {
  const entries: Entry[] = [];
  const folders = new Map<string, Entry & { kind: "folder" }>();
  for (const item of inside(items, names)) {
    const rel = item.names.slice(names.length);
    const levels = Math.min(rel.length, 2);
    for (let depth = 1; depth <= levels; depth++) {
      const path = `${at}/${rel.slice(0, depth).join("/")}`;
      if (depth === rel.length) {
        entries.push({ kind: "file", item, path });
        continue;
      }
      let folder = folders.get(path);
      if (folder === undefined) {
        folders.set(path, folder = { kind: "folder", path: `${path}/`, files: 0 });
        entries.push(folder);
      }
      folder.files++;
    }
  }
  return entries;
}

// The widest size `formatSize` gives for a memory file ("1023.9K" cannot happen below 64 KiB).
const SIZE_WIDTH = 6;
// Sizes come from reading each file shown; this many reads run at once.
const READ_BATCH = 16;

/**
 * `view` of `/memories` (`names` empty) or of a folder: its files (path, size, description) and
 * folders (path, how many files), two levels deep, within `maxChars`. `range` picks entries as
 * `view_range` picks lines (1-based, `-1` for the end); a view that does not fit says which
 * `view_range` shows the rest. A folder that holds nothing does not exist.
 */
export async function viewFolder(
  run: Runner,
  names: readonly string[],
  view: { readonly range: unknown; readonly maxChars: number },
): Promise<string> {
  const at = names.length === 0 ? ROOT : `${ROOT}/${names.join("/")}`;
  const entries = entriesOf(await placedItems(run), names, at);
  if (entries.length === 0) {
    if (names.length > 0) {
      throw new CommandError(
        `The path ${at} does not exist. Please provide a valid path.`,
        "not_found",
      );
    }
    return `Here're the memories in ${ROOT}: there are none yet. Create one with the create command.`;
  }
  let from = 1;
  let to = entries.length;
  const range = view.range;
  if (Array.isArray(range) && range.length === 2) {
    const [a, b] = range as [number, number];
    from = Math.max(1, Math.trunc(a) || 1);
    to = b === -1 ? entries.length : Math.min(entries.length, Math.trunc(b) || entries.length);
  }
  const chosen = entries.slice(from - 1, to);
  const what = "(path, size and description; for a folder, the files it holds)";
  const head = (n: number) =>
    n === entries.length
      ? `Here're the files and folders up to 2 levels deep in ${at} ${what}:\n`
      : `Here're entries ${from} to ${from + n - 1} of ${entries.length}, up to 2 levels deep, ` +
        `in ${at} ${what}:\n`;
  const tail = (n: number) => {
    const next = from + n;
    return next > entries.length
      ? ""
      : `\n${entries.length - next + 1} more not shown; to see them, view ${at} with ` +
        `view_range [${next}, -1].`;
  };
  const line = (e: Entry, size: string) =>
    e.kind === "folder"
      ? `- ${quoteKey(e.path)} (${e.files} ${e.files === 1 ? "file" : "files"})`
      : `- ${quoteKey(e.path)} (${size}): ${oneLine(e.item.description)}`;
  let used = frame("MEMORY INDEX", [], "both").text.length;
  let n = 0;
  while (n < chosen.length) {
    const next = used + line(chosen[n]!, "").length + SIZE_WIDTH + 1;
    if (n > 0 && head(n + 1).length + next + tail(n + 1).length > view.maxChars) break;
    used = next;
    n++;
  }
  const shown = chosen.slice(0, n);
  const sizes = await sizesOf(run, shown);
  const lines = shown.map((e, i) => line(e, sizes[i]!));
  const writer = writersOf(
    shown.flatMap((e) => e.kind === "file" ? [writerOf(run.who, e.item.key, e.item.version)] : []),
  );
  return head(n) + frame("MEMORY INDEX", lines, writer).text + tail(n);
}

// The size of each file shown ("" for a folder), read without the run's scope: seeing a size is
// not reading the file, and must not authorize an overwrite. The caller's signal still applies.
async function sizesOf(run: Runner, shown: readonly Entry[]): Promise<string[]> {
  const plain = plainCall(run);
  const sizes: string[] = [];
  for (let i = 0; i < shown.length; i += READ_BATCH) {
    sizes.push(
      ...await Promise.all(
        shown.slice(i, i + READ_BATCH).map((e) =>
          e.kind === "folder" ? "" : run.store.read(e.item.key, plain).then(
            (entry) => formatSize(utf8Length(entry.content.toWellFormed())),
            () => "?",
          )
        ),
      ),
    );
  }
  return sizes;
}
