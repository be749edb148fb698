/**
 * Handlers for Claude's native memory tool (`memory_20250818`) over any `Store`, for the
 * Anthropic SDK's `betaMemoryTool(handlers)`.
 *
 * @module
 */

import { Scope } from "../../store/scope.ts";
import type { Proposal, Store } from "../../store/types.ts";
import { instrument, isReadOnly, legalCallId } from "../../store/build.ts";
import type { AnthropicMemoryHandlers } from "./types.ts";
import type { AnthropicToolRunContext } from "../anthropic.ts";
import { checkStore } from "../_adapt.ts";
import { frame, framedAs, numberedLines, oneLine } from "../_frame.ts";
import { noteWrite, sameStore, type Who, writerOf } from "../_writers.ts";
import { readWithVersion } from "../../store/history.ts";
import type { EntryVersion } from "../../store/backend.ts";
import { DEFAULT_LIST_CHARS, MIN_LIST_CHARS } from "../_list_tool.ts";
import { readToolOptions } from "../_options.ts";
import { inOrder } from "../_queue.ts";
import { CommandError, describeText, insertAt, strReplace, viewRange } from "./_files.ts";
import { folderOf, keyOf, type MemoryPath, parsePath, ROOT } from "./_paths.ts";
import {
  editFile,
  isNotFound,
  renameFile,
  runCall,
  type Runner,
  storeError,
  traced,
} from "./_commands.ts";
import { checkWay, deleteFolder, needsPlaceCheck, occupied, renameFolder } from "./_folders.ts";
import { inside, placedItems, viewFolder } from "./_view.ts";
import { protectedStore, refuseProtected } from "./_protect.ts";
import { refuseOverBudget } from "./_budget.ts";
import { heldText, heldView } from "./_held.ts";
import { checkKeyRules } from "../_key_rules.ts";

export type {
  AnthropicMemoryHandlers,
  MemoryCreateCommand,
  MemoryDeleteCommand,
  MemoryInsertCommand,
  MemoryRenameCommand,
  MemoryStrReplaceCommand,
  MemoryViewCommand,
} from "./types.ts";

/** Options of `anthropicMemoryHandlers`. */
export interface AnthropicMemoryHandlersOptions {
  /**
   * The run's scope, as every store call takes it: views record the revisions they read in it,
   * and each successful write records the revision it wrote. `null` is a run without a scope, as
   * everywhere in this library: nothing is recorded, and nothing this run reads authorizes a
   * later overwrite. Edits work either way: each `str_replace`, `insert` and `rename` reads and
   * writes with a scope of its own, so its own read authorizes only its own write. Every
   * command's versions record this scope's run, actor and taint (none with `null`), `via:
   * "claude_memory:<command>"` and the tool call's id, so `revertRun` of the run undoes them all.
   */
  readonly scope: Scope | null;
  /** Refuse `create`, `str_replace`, `insert`, `delete` and `rename`. Implied by a read-only store. */
  readonly readOnly?: boolean | undefined;
  /**
   * The most characters `view /memories` shows (default `DEFAULT_LIST_CHARS`, at least
   * `MIN_LIST_CHARS`); past it the view says how to see the rest with `view_range`.
   */
  readonly viewMaxChars?: number | undefined;
  /**
   * Run the commands of one scope one after another, in the order they were called (default
   * `true`). The SDK's tool runner runs a turn's tool calls at once; in order, a `create` then a
   * `str_replace` of the same file in one turn works as the model planned. The queue is the
   * scope's, shared with `memoryTools` over the same scope; with `scope: null`, these handlers'
   * own.
   */
  readonly ordered?: boolean | undefined;
  /**
   * Keys whose files the model may view but never create, edit, rename or delete: exact keys,
   * or prefixes ending in "." (`"policy."`). Such a command is refused, naming the rule, and
   * changes nothing (a folder delete or rename that would touch one changes no file). The store's
   * own API and the CLI are not restricted. Default: none.
   */
  readonly protect?: readonly string[] | undefined;
}

const OPTION_FIELDS = ["scope", "readOnly", "viewMaxChars", "ordered", "protect"];

/**
 * Handlers for Claude's native memory tool over `store`, to pass to the Anthropic SDK's
 * `betaMemoryTool(handlers)`. The model's trained-in memory tool then keeps its files in any
 * store, file or jetstream.
 *
 * - **Paths and folders.** A path maps to a key and back (see `claudeMemoryKey` and
 *   `claudeMemoryPath`): folders and the file name are joined by `=`, which no name in a path
 *   holds, and a file's `.md` is dropped, so `/memories/projects/acme.md` is the key
 *   `projects=acme` (and `/memories/notes.txt` the key `notes.txt=`). `view` of `/memories` or
 *   of a folder lists files (path, size, description) and folders (how many files) two levels
 *   deep; `delete` of a folder deletes each file it holds; `rename` moves a file or a folder
 *   anywhere. A folder exists while it holds a file. A path outside `/memories`, with `..`, `//`
 *   or a hidden name, more than 8 names deep, a folder named like a file (`x.md/`), or longer
 *   than a key once joined is refused, saying what is legal; a refused path writes nothing.
 * - **The tool's documented semantics.** `str_replace` replaces `old_str` when it occurs exactly
 *   once in the whole text (it may span lines), and an omitted `new_str` deletes it, as the
 *   tool's definition and the Python SDK have it. Everything else succeeds or fails exactly when
 *   the TypeScript SDK's `BetaLocalFilesystemMemoryTool` would for the same commands, and leaves
 *   the same file text (the same `insert_line` range, for one). Where we differ from that tool on
 *   purpose: its `str_replace` matches line by line (a multi-line `old_str` is refused, one that
 *   occurs twice on one line replaces the first) and writes "undefined" for an omitted
 *   `new_str`; the store's limits (64 KiB of text, 1,024 files, legal names) apply; and an empty
 *   folder does not exist.
 * - **Descriptions.** A created file is described by its first non-blank line (a Markdown
 *   heading's `#` marks dropped, cut to 500 characters), which the index at the start of each run
 *   shows. An edit keeps a description that came from the text in step with it, and leaves
 *   alone one written otherwise (by `memory_write`). A rename keeps the description.
 * - **No lost edits.** `str_replace` and `insert` read the current text, apply the edit and write
 *   only if the file still holds what they read, on every store this library builds, whatever
 *   its read-before-update default (a file store without `readBeforeUpdate` included); when
 *   another writer came first they pause a little, read again and retry. `rename` creates the
 *   new file with exactly what it read and deletes the old one only if it still holds that;
 *   otherwise it takes the copy back and fails as stale. (A `Store` of another make gets
 *   whatever revision check its own `update` makes.)
 * - **In order.** Commands through one scope run one after another, in the order called.
 * - Stored text is shown framed as data, saying who wrote it (an earlier run, or this one),
 *   with line numbers as the model expects.
 *
 * @example
 * ```ts
 * import { anthropicMemoryHandlers, openFileStore, Scope } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const store = await openFileStore({ dir });
 * const memory = anthropicMemoryHandlers(store, { scope: new Scope() });
 * const path = "/memories/user/units.md";
 * await memory.create({ command: "create", path, file_text: "# Units\nmetric\n" });
 * await memory.str_replace({ command: "str_replace", path, old_str: "metric", new_str: "metric (SI)" });
 * assert.deepEqual(await store.read("user=units"), { description: "Units", content: "# Units\nmetric (SI)\n" });
 * await assert.rejects(memory.create({ command: "create", path: "/memories/../x", file_text: "" }), /legal/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @param store The store; any `Store` works.
 * @param options The run's `scope`, `readOnly`, `viewMaxChars`, `ordered` and `protect`.
 * @returns The handlers, for `betaMemoryTool(handlers)` from `@anthropic-ai/sdk/helpers/beta/memory`.
 * @throws {ConfigError} when `store` is not a store or an option is invalid.
 */
export function anthropicMemoryHandlers(
  store: Store,
  options: AnthropicMemoryHandlersOptions,
): AnthropicMemoryHandlers {
  const { backend, scope, readOnly, viewMaxChars, ordered, protect } = checkOptions(store, options);
  const s = protectedStore(instrument(store), protect);
  const writable = (command: string) => {
    if (readOnly || isReadOnly(store)) {
      throw new CommandError(
        `Refused: memory is read-only in this run, so ${command} is not available and nothing ` +
          `was changed. Use view to read memories.`,
        "read_only",
      );
    }
  };
  // Reads and plain writes go through the run's scope (`null`: none); edits use their own.
  const handlers: { [C in keyof AnthropicMemoryHandlers]: Handler<C> } = {
    async view({ path, view_range }, run) {
      const p = parsePath(path);
      const view = { range: view_range, maxChars: viewMaxChars };
      if (p.root || p.slash) return await viewFolder(run, folderNames(p), view);
      const read = await readIfAny(run, p);
      if (read === undefined) {
        const names = folderOf(p);
        if (names === undefined) throw missing(p);
        // A path no file can have (too long, say) that is no folder either says why.
        return await viewFolder(run, names, view).catch((e) => {
          throw e instanceof CommandError && e.outcome === "not_found" ? notAFile(p) ?? e : e;
        });
      }
      const { entry, version } = read;
      const { lines, first } = viewRange(entry.content.split("\n"), view_range);
      const writer = writerOf(run.who, keyOf(p), version);
      const { text } = frame("MEMORY DATA", [
        `description: ${oneLine(entry.description)}`,
        ...numberedLines(lines, first),
      ], writer);
      return `Here's the content of ${p.path} with line numbers ${framedAs(writer)}:\n${text}`;
    },
    async create({ path, file_text }, run) {
      writable("create");
      const p = parsePath(path);
      if (p.root) throw new CommandError(`File ${path} already exists`);
      if (typeof file_text !== "string") throw new CommandError(`file_text must be a string`);
      const key = keyOf(p);
      if (needsPlaceCheck(p)) {
        const items = await placedItems(run);
        checkWay(items, p.names, p.path);
        if (occupied(items, p.names)) throw new CommandError(`File ${p.path} already exists`);
      }
      try {
        await run.store.create(key, describeText(file_text), file_text, runCall(run));
      } catch (e) {
        throw storeError(e, p.path, `File ${p.path} already exists`);
      }
      noteWrite(run.who.owner, run.who.store, key, true);
      return `File created successfully at: ${path}`;
    },
    async str_replace({ path, old_str, new_str }, run) {
      writable("str_replace");
      const p = parsePath(path);
      const key = keyOf(p);
      if (typeof old_str !== "string") throw new CommandError("old_str must be a string");
      // Omitted, new_str deletes old_str (the tool's definition makes it optional).
      const replacement = new_str ?? "";
      if (typeof replacement !== "string") {
        throw new CommandError("new_str must be a string, or omitted to delete old_str");
      }
      let line = 0;
      const text = await edit(run, p, key, (current) => {
        const edited = strReplace(p.path, current, old_str, replacement);
        line = edited.line;
        return edited.text;
      });
      const lines = text.split("\n");
      const start = Math.max(0, line - 3);
      const end = Math.min(lines.length, line + replacement.split("\n").length + 1);
      const snippet = numberedLines(lines.slice(start, end), start + 1);
      return "The memory file has been edited. Here is the snippet showing the change (with line " +
        `numbers):\n${frame("MEMORY DATA", snippet, "this").text}`;
    },
    async insert({ path, insert_line, insert_text }, run) {
      writable("insert");
      const p = parsePath(path);
      const key = keyOf(p);
      if (typeof insert_line !== "number" || typeof insert_text !== "string") {
        throw new CommandError("insert_line must be a number and insert_text a string");
      }
      await edit(run, p, key, (current) => insertAt(current, insert_line, insert_text));
      return `The file ${path} has been edited.`;
    },
    async delete({ path }, run) {
      writable("delete");
      const p = parsePath(path);
      if (p.root) throw new CommandError(`Cannot delete the ${ROOT} directory itself`);
      const key = p.slash ? undefined : fileKey(p);
      if (key !== undefined) {
        let existed;
        try {
          existed = await run.store.delete(key, runCall(run));
        } catch (e) {
          throw storeError(e, p.path);
        }
        noteWrite(run.who.owner, run.who.store, key, false);
        if (existed) return `Successfully deleted ${path}`;
      }
      const names = folderOf(p);
      if (names === undefined) throw new CommandError(`The path ${path} does not exist`);
      if (protect.length > 0 || scope?.budget !== undefined) {
        const files = inside(await placedItems(run), names).map((i) => i.key);
        refuseProtected(protect, files);
        refuseOverBudget(scope, { writes: 0, deletes: files.length });
      }
      await deleteFolder(run, names);
      return `Successfully deleted ${path}`;
    },
    async rename({ old_path, new_path }, run) {
      writable("rename");
      const from = parsePath(old_path);
      const to = parsePath(new_path);
      if (from.root) throw new CommandError(`Cannot rename the ${ROOT} directory itself`);
      if (to.root) throw new CommandError(`The destination ${new_path} already exists`);
      const items = await placedItems(run);
      if (occupied(items, to.names)) {
        throw new CommandError(`The destination ${new_path} already exists`);
      }
      checkWay(items, to.names, to.path);
      const fromKey = from.slash ? undefined : fileKey(from);
      if (fromKey !== undefined && items.some((i) => i.key === fromKey)) {
        refuseProtected(protect, [fromKey, keyOf(to)]);
        refuseOverBudget(scope, { writes: 1, deletes: 1 });
        await renameFile(run, fromKey, keyOf(to));
        return `Successfully renamed ${old_path} to ${new_path}`;
      }
      const names = folderOf(from);
      const held = names === undefined ? [] : inside(items, names);
      if (names === undefined || held.length === 0) {
        throw new CommandError(`The path ${old_path} does not exist`);
      }
      const target = folderOf(to);
      if (target === undefined) {
        throw new CommandError(
          `Cannot rename the folder ${from.path} to ${to.path}: a folder's name does not end in ` +
            ".md. Nothing was changed.",
        );
      }
      if (protect.length > 0) {
        const moved = held.map((i) => [...target, ...i.names.slice(names.length)].join("/"));
        refuseProtected(protect, [
          ...held.map((i) => i.key),
          ...moved.map((path) => keyOf(parsePath(`${ROOT}/${path}`))),
        ]);
      }
      refuseOverBudget(scope, { writes: held.length, deletes: held.length });
      await renameFolder(run, held, { from: names, to: target });
      return `Successfully renamed ${old_path} to ${new_path}`;
    },
  };
  // One queue per scope (shared with memoryTools over the same scope), or per handler set; the
  // same object owns the writes the frames call this run's.
  const order: object = scope ?? {};
  const who: Who = { owner: order, store, scope };
  sameStore(s, store);
  const command = <C extends keyof AnthropicMemoryHandlers>(name: C) => {
    const handler = handlers[name] as Handler<C>;
    const t = traced(backend, name, async (c: Command<C>, context?: AnthropicToolRunContext) => {
      const signal = context?.signal ?? undefined;
      const callId = legalCallId(context?.toolUse?.id);
      // Writes the store holds for review are reported here, and the model told so.
      const held: Proposal[] = [];
      const text = await handler(c, {
        store: heldView(s, held),
        scope,
        who,
        via: `claude_memory:${name}`,
        ...(signal === undefined ? {} : { signal }),
        ...(callId === undefined ? {} : { callId }),
      });
      return held.length === 0 ? text : heldText(name, c as unknown as Record<string, unknown>);
    });
    return ordered
      ? (c: Command<C>, context?: AnthropicToolRunContext) => inOrder(order, () => t(c, context))
      : t;
  };
  return Object.freeze({
    view: command("view"),
    create: command("create"),
    str_replace: command("str_replace"),
    insert: command("insert"),
    delete: command("delete"),
    rename: command("rename"),
  });
}

type Command<C extends keyof AnthropicMemoryHandlers> = Parameters<AnthropicMemoryHandlers[C]>[0];
type Handler<C extends keyof AnthropicMemoryHandlers> = (
  command: Command<C>,
  run: Runner,
) => Promise<string>;

function checkOptions(store: Store, options: AnthropicMemoryHandlersOptions): {
  backend: string;
  scope: Scope | null;
  readOnly: boolean;
  viewMaxChars: number;
  ordered: boolean;
  protect: readonly string[];
} {
  const action = "make the memory tool handlers";
  const backend = checkStore(store, action);
  const o = readToolOptions(action, options, OPTION_FIELDS);
  const { scope } = o.fields;
  if (!Object.hasOwn(o.fields, "scope") || (scope !== null && !(scope instanceof Scope))) {
    throw o.fail(`option "scope" must be the run's Scope, or null`);
  }
  return {
    backend,
    scope: scope ?? null,
    readOnly: o.boolean("readOnly") === true,
    viewMaxChars: o.integer("viewMaxChars", MIN_LIST_CHARS, DEFAULT_LIST_CHARS),
    ordered: o.boolean("ordered") ?? true,
    protect: checkKeyRules(action, "protect", o.fields.protect),
  };
}

// The folder a view names: the directory, or a path ending in "/".
function folderNames(p: MemoryPath): readonly string[] {
  const names = folderOf(p);
  if (names === undefined) throw missing(p);
  return names;
}

function missing(p: MemoryPath): CommandError {
  return new CommandError(`The path ${p.path} does not exist. Please provide a valid path.`);
}

// Why `p` cannot name a file, or `undefined` when it can.
function notAFile(p: MemoryPath): CommandError | undefined {
  try {
    keyOf(p);
    return undefined;
  } catch (e) {
    return e as CommandError;
  }
}

// The key of the file `p` names, or `undefined` when it can name only a folder.
function fileKey(p: MemoryPath): string | undefined {
  try {
    return keyOf(p);
  } catch (e) {
    if (folderOf(p) !== undefined) return undefined;
    throw e;
  }
}

// The file `p` names, read through the run's scope with the version that wrote it (with
// history); `undefined` when there is none.
async function readIfAny(run: Runner, p: MemoryPath): Promise<EntryVersion | undefined> {
  const key = fileKey(p);
  if (key === undefined) return undefined;
  try {
    return await readWithVersion(run.store, key, runCall(run));
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw storeError(e, p.path);
  }
}

// An edit of the file `p` names; a folder there is "not a file", as the SDK's tool says.
async function edit(
  run: Runner,
  p: MemoryPath,
  key: string,
  apply: (text: string) => string,
): Promise<string> {
  try {
    return await editFile(run, key, apply);
  } catch (e) {
    if (!(e instanceof CommandError && e.outcome === "not_found")) throw e;
    const names = folderOf(p);
    if (names !== undefined && inside(await placedItems(run), names).length > 0) {
      throw new CommandError(`The path ${p.path} is not a file.`);
    }
    throw e;
  }
}
