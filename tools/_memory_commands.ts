// The store side of Claude's memory tool: the directory view, the revision-checked edit loop,
// and store failures in the words the SDK's filesystem tool uses.

import { MemoryError } from "../store/errors.ts";
import { MAX_CONTENT_BYTES, MAX_ENTRIES } from "../store/limits.ts";
import type { CallOptions, Item, Store } from "../store/types.ts";
import { withSpan } from "../store/_telemetry.ts";
import { utf8Length } from "../store/_text.ts";
import { frame, oneLine, quoteKey } from "./_frame.ts";
import { CommandError, describeText, formatSize, pathOf, ROOT } from "./_memory_files.ts";

/** How many times an edit re-reads and retries after another writer changed the file first. */
export const EDIT_ATTEMPTS = 100;

/** `true` when `e` says the memory does not exist. */
export function isNotFound(e: unknown): boolean {
  return e instanceof MemoryError && e.code === "not_found";
}

/**
 * A store failure as the model reads it. A store's own message is never shown: it is written for
 * operators and may name hosts or paths.
 */
export function storeError(
  e: unknown,
  path: string,
  exists = `File ${path} already exists`,
): CommandError {
  if (e instanceof CommandError) return e;
  const code = e instanceof MemoryError ? e.code : "error";
  const fail = (message: string) => new CommandError(message, code);
  switch (code) {
    case "not_found":
      return fail(`The path ${path} does not exist. Please provide a valid path.`);
    case "exists":
      return fail(exists);
    case "capacity":
      return fail(
        `Refused: memory is full (${MAX_ENTRIES} files, the most it holds). Nothing was written. ` +
          "Delete a file you no longer need, or edit one.",
      );
    case "too_large":
    case "invalid_content":
      return fail(
        `Refused: a memory file holds at most ${MAX_CONTENT_BYTES} bytes of UTF-8 text, so ` +
          `${path} was not written. Keep it shorter, or split it into two files.`,
      );
    case "invalid_key":
    case "invalid_description":
      return fail(`Refused: the store does not accept ${path}. Nothing was written.`);
    case "read_only":
      return fail("Refused: memory is read-only in this run. Nothing was changed.");
    case "stale":
      return fail(
        `The file ${path} kept changing while this run edited it, so the edit was not made. ` +
          "View it and try again.",
      );
    case "corrupt":
      return fail(`The file ${path} is damaged and cannot be read. You can delete it.`);
    default:
      return fail(
        "The memory store is temporarily unavailable, so the command did not complete. This is " +
          `not caused by your command; you may retry later. View ${path} to check it first.`,
      );
  }
}

/**
 * Applies `apply` to the file's current text and writes the result only if nobody wrote the file
 * in between (the store's revision check, through the scope the read recorded in); when somebody
 * did, reads again and re-applies. `apply` throws to refuse the edit, and then nothing is written.
 * Returns the text written.
 */
export async function editFile(
  store: Store,
  call: CallOptions,
  key: string,
  apply: (text: string) => string,
): Promise<string> {
  const path = pathOf(key);
  for (let attempt = 1;; attempt++) {
    let entry;
    try {
      entry = await store.read(key, call);
    } catch (e) {
      throw storeError(e, path);
    }
    const text = apply(entry.content);
    // A description that came from the text follows it; one written otherwise stays.
    const description = entry.description === describeText(entry.content)
      ? describeText(text)
      : entry.description;
    try {
      await store.update(key, description, text, call);
      return text;
    } catch (e) {
      if (!(e instanceof MemoryError && e.code === "stale") || attempt >= EDIT_ATTEMPTS) {
        throw storeError(e, path);
      }
    }
  }
}

// The widest size `formatSize` gives for a memory file ("1023.9K" cannot happen below 64 KiB).
const SIZE_WIDTH = 6;
// Sizes come from reading each file shown; this many reads run at once.
const READ_BATCH = 16;

/**
 * `view /memories`: every memory's path, size and description, in key order, within `maxChars`.
 * `range` picks entries as `view_range` picks lines (1-based, `-1` for the end); a view that does
 * not fit says which `view_range` shows the rest.
 */
export async function viewRoot(
  store: Store,
  call: CallOptions,
  range: unknown,
  maxChars: number,
): Promise<string> {
  let listed;
  try {
    listed = await store.list(call);
  } catch (e) {
    throw storeError(e, ROOT);
  }
  const items = (Array.isArray(listed) ? listed : [])
    .filter((i: Item) => typeof i?.key === "string" && typeof i.description === "string")
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  if (items.length === 0) {
    return `Here're the memories in ${ROOT}: there are none yet. Create one with the create command.`;
  }
  let from = 1;
  let to = items.length;
  if (Array.isArray(range) && range.length === 2) {
    const [a, b] = range as [number, number];
    from = Math.max(1, Math.trunc(a) || 1);
    to = b === -1 ? items.length : Math.min(items.length, Math.trunc(b) || items.length);
  }
  const chosen = items.slice(from - 1, to);
  const head = (n: number) =>
    n === items.length
      ? `Here're the memories in ${ROOT} (path, size, description):\n`
      : `Here're memories ${from} to ${from + n - 1} of ${items.length} in ${ROOT} (path, size, ` +
        "description):\n";
  const tail = (n: number) => {
    const next = from + n;
    return next > items.length
      ? ""
      : `\n${items.length - next + 1} more not shown; to see them, view ${ROOT} with ` +
        `view_range [${next}, -1].`;
  };
  const line = (i: Item, size: string) =>
    `- ${quoteKey(pathOf(i.key))} (${size}): ${oneLine(i.description)}`;
  let used = frame("MEMORY INDEX", []).text.length;
  let n = 0;
  while (n < chosen.length) {
    const next = used + line(chosen[n]!, "").length + SIZE_WIDTH + 1;
    if (n > 0 && head(n + 1).length + next + tail(n + 1).length > maxChars) break;
    used = next;
    n++;
  }
  const shown = chosen.slice(0, n);
  const sizes: string[] = [];
  for (let i = 0; i < shown.length; i += READ_BATCH) {
    sizes.push(
      ...await Promise.all(
        shown.slice(i, i + READ_BATCH).map((item) =>
          // Without the run's scope: seeing a size is not reading the file, and must not
          // authorize an overwrite. The caller's signal still applies.
          store.read(item.key, call.signal ? { signal: call.signal } : {}).then(
            (e) => formatSize(utf8Length(e.content.toWellFormed())),
            () => "?",
          )
        ),
      ),
    );
  }
  const lines = shown.map((item, i) => line(item, sizes[i]!));
  return head(n) + frame("MEMORY INDEX", lines).text + tail(n);
}

// Each command makes an `execute_tool memory` span, with the command and its outcome: "ok", a
// store error code, or "refused" for a command the SDK's own tool would refuse too.
export function traced<C>(
  backend: string,
  command: string,
  run: (c: C) => Promise<string>,
): (c: C) => Promise<string> {
  return (c) =>
    withSpan(
      "execute_tool memory",
      {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "memory",
        "memory.backend": backend,
        "memory.operation": `memory.${command}`,
      },
      async () => {
        try {
          if (c === null || typeof c !== "object" || Array.isArray(c)) {
            throw new CommandError(
              `The ${command} command's input must be a JSON object, as the memory tool defines it`,
            );
          }
          return { text: await run(c) };
        } catch (e) {
          return { error: e instanceof CommandError ? e : storeError(e, ROOT) };
        }
      },
      (r) => "error" in r ? r.error.outcome : "ok",
    ).then((r) => {
      if ("error" in r) throw r.error;
      return r.text;
    });
}

/** The store's backend name, for spans; a store whose info() fails is a ConfigError. */
