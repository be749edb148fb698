/**
 * The file backend: one file per key in a directory, written atomically. The embedded default;
 * it needs no server, and runs on Deno, Node and Bun.
 *
 * - A write stages a temp file (mode 0600; its name starts with a dot, so it is never a key),
 *   flushes it, then `link`s it into place for a create (which fails if the key exists, so
 *   exactly one of several concurrent creators wins) or `rename`s it for an overwrite (readers see
 *   the old entry or the new, never a mix), then flushes the directory. Writes in flight at once
 *   share directory flushes; none is acknowledged before a flush that covers it.
 * - Capacity is counted on every create, so creates that do not overlap never pass
 *   `MAX_ENTRIES`; creates that overlap can pass it by at most the number in flight.
 * - Listing re-validates every name and reads only each file's header.
 * - Symlinks, directories and other non-regular files are never followed: they are not memories.
 * - Read-before-update is off by default (the seed's contract: `update` replaces, and creates a
 *   key that holds nothing). With `readBeforeUpdate: true` it is enforced exactly as on
 *   jetstream, with revisions that identify the stored bytes and a check-and-rename made atomic
 *   across processes by a per-key lock held only for that instant.
 *
 * @module
 */

import { errorKind } from "../store/text.ts";
import { ConfigError } from "../store/errors.ts";
import { decodeOptions } from "../store/options.ts";
import { HISTORY_OPTION, retentionOf } from "../store/retention.ts";
import { REVIEW_OPTION, reviewModeOf } from "../store/review.ts";
import type { VersionedStoreOptions } from "../store/types.ts";
import { registerBackend } from "../store/registry.ts";
import type { Store } from "../store/types.ts";
import { buildStore, readOnlyStore } from "../store/build.ts";
import { FileBackend } from "./file/backend.ts";
import { sweepDir } from "./file/sweep.ts";
import { dirIdentity, kindOf, makeDir, realPath } from "./file/fs.ts";
import { HISTORY_DIR } from "./file/names.ts";

/** Options of the file backend. */
export interface FileStoreOptions extends VersionedStoreOptions {
  /**
   * The directory that holds the memories. When missing, it is created with mode 0700 (an
   * existing directory's mode is left as the operator set it).
   */
  readonly dir: string;
  /**
   * fsync each file before it is linked or renamed into place, and the directory after. Default
   * `true`; `false` skips the directory fsyncs, so a power cut may lose acknowledged writes (each
   * key keeps its old entry or its new one: the file fsync that keeps writes atomic stays).
   */
  readonly durable?: boolean | undefined;
  /**
   * Open for reading only: the directory must exist and is never created or written; writes are
   * refused with `ReadOnlyError`. Read permission is enough. Default `false`.
   */
  readonly readOnly?: boolean | undefined;
}

const FILE_OPTIONS = {
  dir: { type: "string", required: true, description: "the directory that holds the memories" },
  durable: { type: "boolean", description: "fsync the directory after each write (default true)" },
  readBeforeUpdate: {
    type: "boolean",
    description: "refuse an update of a key this run has not read at its current revision",
  },
  readOnly: { type: "boolean", description: "never create or write anything (default false)" },
  history: HISTORY_OPTION,
  review: REVIEW_OPTION,
} as const;

const BACKEND = "file";
const DIR_MODE = 0o700;

/**
 * Opens a file store over `dir`, creating the directory (mode 0700) if it is missing.
 *
 * @example Write, then read back
 * ```ts
 * import { openFileStore } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const store = await openFileStore({ dir });
 * await store.create("greeting", "How the user likes to be greeted", "By first name.");
 * assert.deepEqual(await store.read("greeting"), {
 *   description: "How the user likes to be greeted",
 *   content: "By first name.",
 * });
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @example Several agents sharing one directory
 * ```ts
 * import { openFileStore, Scope, StaleError } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const a = await openFileStore({ dir, readBeforeUpdate: true });
 * const b = await openFileStore({ dir, readBeforeUpdate: true });
 * await a.create("plan", "The plan", "v1");
 * const runA = new Scope();
 * const runB = new Scope();
 * await a.read("plan", { scope: runA });
 * await b.read("plan", { scope: runB });
 * await b.update("plan", "The plan", "v2 by b", { scope: runB });
 * await assert.rejects(a.update("plan", "The plan", "v2 by a", { scope: runA }), StaleError);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @param options The directory, whether to fsync, whether to check revisions, read-only.
 * @returns The store.
 * @throws {ConfigError} when the options are invalid or the directory cannot be opened.
 */
export async function openFileStore(options: FileStoreOptions): Promise<Store> {
  const decoded = decodeOptions(BACKEND, options, FILE_OPTIONS);
  const { dir, durable = true, readBeforeUpdate = false, readOnly = false } = decoded;
  const history = retentionOf(BACKEND, decoded.history);
  const review = reviewModeOf(BACKEND, decoded.review, history !== undefined);
  if (dir === "") {
    throw new ConfigError(
      `[memory:file] Invalid options for the file backend: option "dir" is empty`,
    );
  }
  let root: string;
  try {
    if (!readOnly) makeDir(dir, DIR_MODE);
    root = realPath(dir);
    if (dirIdentity(root) === null) throw Object.assign(new Error(), { code: "ENOTDIR" });
  } catch (e) {
    // The operator knows the path they configured; the message never repeats it.
    throw new ConfigError(
      `[memory:file] Cannot open the memory directory given by option "dir": ${ioReason(e)}`,
      { cause: e },
    );
  }
  if (!readOnly && history === undefined && kindOf(`${root}/${HISTORY_DIR}`) !== null) {
    // A handle without history would write over kept versions without recording its writes.
    throw new ConfigError(
      `[memory:file] Cannot open the memory directory for writing with option "history" false: it keeps history (${HISTORY_DIR}); open it with history on (the default), or with readOnly: true`,
    );
  }
  if (!readOnly) await sweepDir(root);
  const backend = new FileBackend({
    root,
    durable,
    readBeforeUpdate,
    writable: !readOnly,
    history,
  });
  await backend.opened();
  const store = buildStore(backend, { review });
  return readOnly ? readOnlyStore(store) : store;
}

registerBackend(BACKEND, {
  options: FILE_OPTIONS,
  open: (options, _deps, context) =>
    openFileStore({
      ...options,
      // Checked by openFileStore, as every option is.
      review: options.review as FileStoreOptions["review"],
      readOnly: options.readOnly === true || context?.readOnly === true,
    }),
});

function ioReason(e: unknown): string {
  const code = errorKind(e);
  if (code === "ENOENT") return "it does not exist";
  if (code === "ENOTDIR" || code === "EEXIST") return "it is not a directory";
  if (code === "EACCES" || code === "EPERM" || code === "NotCapable") return "permission denied";
  return code;
}
