// Folders of Claude's memory tool: a folder is the names its files' paths share, so it exists
// while it holds a file. Where a file may go (no file in place of a folder on its way, no folder
// in its place), and deleting or renaming a folder as one key at a time: each key its own version,
// each rename revision-checked, so one revertRun undoes all of it and no racing edit is lost.

import { CommandError } from "./_files.ts";
import { keyOf, type MemoryPath, parsePath, ROOT } from "./_paths.ts";
import { renameFile, runCall, type Runner, storeError } from "./_commands.ts";
import { inside, type Placed, placedItems } from "./_view.ts";
import { noteWrite } from "../_writers.ts";

/** The path of the names, under `/memories`. */
function pathAt(names: readonly string[]): string {
  return names.length === 0 ? ROOT : `${ROOT}/${names.join("/")}`;
}

/** Whether a file or a folder is at `names`. */
export function occupied(items: readonly Placed[], names: readonly string[]): boolean {
  const path = pathAt(names);
  return items.some((i) => i.path === path) || inside(items, names).length > 0;
}

/**
 * Refuses a file or folder at `names` when a folder on its way is a file (`/memories/a` a file,
 * and `/memories/a/b.md` wanted), as a filesystem would.
 */
export function checkWay(items: readonly Placed[], names: readonly string[], path: string): void {
  for (let n = 1; n < names.length; n++) {
    const folder = pathAt(names.slice(0, n));
    if (items.some((i) => i.path === folder)) {
      throw new CommandError(
        `Cannot write ${path}: ${folder} is a file, not a folder. Nothing was changed.`,
      );
    }
  }
}

/** Whether `p` may name a file whose way and place need looking at (see `checkPlace`). */
export function needsPlaceCheck(p: MemoryPath): boolean {
  return !p.root && (p.names.length > 1 || !p.names[0]!.endsWith(".md"));
}

/**
 * `delete` of a folder: deletes each file it holds (each one version, through the run's scope).
 * Throws when it holds none; when some could not be deleted, says which.
 */
export async function deleteFolder(run: Runner, names: readonly string[]): Promise<void> {
  const path = pathAt(names);
  const held = inside(await placedItems(run), names);
  if (held.length === 0) throw new CommandError(`The path ${path} does not exist`);
  const failed: string[] = [];
  for (const item of held) {
    try {
      await run.store.delete(item.key, runCall(run));
      noteWrite(run.who.owner, run.who.store, item.key, false);
    } catch (e) {
      failed.push(`${item.path} (${storeError(e, item.path).message})`);
    }
  }
  if (failed.length > 0) {
    throw new CommandError(
      `Deleted ${held.length - failed.length} of the ${held.length} files in ${path}; not ` +
        `deleted: ${failed.join("; ")}`,
      "partial",
    );
  }
}

/**
 * `rename` of a folder to `to` (a free path): moves each file it holds, each with `renameFile`
 * (revision-checked). Every new path is checked before anything moves; when some file changed
 * while it moved, the others stay moved and the error says which did not.
 */
export async function renameFolder(
  run: Runner,
  held: readonly Placed[],
  move: { readonly from: readonly string[]; readonly to: readonly string[] },
): Promise<void> {
  const [fromPath, toPath] = [pathAt(move.from), pathAt(move.to)];
  if (move.to.length > move.from.length && move.from.every((n, i) => move.to[i] === n)) {
    throw new CommandError(`Cannot move ${fromPath} into itself (${toPath}). Nothing was changed.`);
  }
  const moves = held.map((item) => {
    const target = pathAt([...move.to, ...item.names.slice(move.from.length)]);
    return { item, target, key: keyOf(parsePath(target)) };
  });
  const failed: string[] = [];
  for (const { item, target, key } of moves) {
    try {
      await renameFile(run, item.key, key);
    } catch (e) {
      failed.push(`${item.path} (${storeError(e, target).message})`);
    }
  }
  if (failed.length > 0) {
    throw new CommandError(
      `Moved ${moves.length - failed.length} of the ${moves.length} files in ${fromPath} to ` +
        `${toPath}; not moved: ${failed.join("; ")}`,
      "partial",
    );
  }
}
