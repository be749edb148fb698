// The store side of Claude's memory tool: who runs a command, the revision-checked edit loop and
// rename, and store failures in the words the SDK's filesystem tool uses.

import { type BudgetError, MemoryError } from "../../store/errors.ts";
import { MAX_CONTENT_BYTES, MAX_ENTRIES } from "../../store/limits.ts";
import type { Scope } from "../../store/scope.ts";
import type { CallOptions, Entry, Store } from "../../store/types.ts";
import { checkedCall } from "../../store/checked.ts";
import { withSpan } from "../../store/telemetry.ts";
import { CommandError, describeText } from "./_files.ts";
import { pathOf, ROOT } from "./_paths.ts";
import { commandScope, keepTaint } from "./_scope.ts";
import { noteWrite, type Who } from "../_writers.ts";
import { budgetText, QUEUE_FULL_TEXT } from "../_refusals.ts";
import { ReviewQueueFullError } from "../../store/hold.ts";

/** How many times an edit re-reads and retries after another writer changed the file first. */
export const EDIT_ATTEMPTS = 24;
/** The longest pause between two attempts, in milliseconds. */
export const MAX_EDIT_PAUSE_MS = 200;

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
      if (e instanceof ReviewQueueFullError) return fail(QUEUE_FULL_TEXT);
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
    case "budget":
      return fail(budgetText(e as BudgetError));
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
 * Who runs a command: the store, the run's scope (`null`: none), the caller's signal, and the
 * provenance every write records (`via`: `claude_memory:<command>`; the tool call's id).
 */
export interface Runner {
  readonly store: Store;
  readonly scope: Scope | null;
  /** Whose writes the frames attribute to this run (see tools/_writers.ts). */
  readonly who: Who;
  readonly signal?: AbortSignal | undefined;
  readonly via: string;
  readonly callId?: string | undefined;
}

/** The call options of a command's reads and writes, with no scope: they grant nothing. */
export function plainCall(run: Runner): CallOptions {
  return {
    via: run.via,
    ...(run.signal === undefined ? {} : { signal: run.signal }),
    ...(run.callId === undefined ? {} : { callId: run.callId }),
  };
}

/** The call options through the run's scope. */
export function runCall(run: Runner): CallOptions {
  return { ...plainCall(run), scope: run.scope };
}

/**
 * A command's own call options: a scope of its own, so that this command's read authorizes only
 * this command's write (two commands of one run editing one file at once would otherwise
 * authorize each other's stale writes), which names the run exactly as the run's scope does
 * (see `_scope.ts`), and the caller's signal and provenance.
 */
export function ownCall(run: Runner): CallOptions & { readonly scope: Scope } {
  return { ...plainCall(run), scope: commandScope(run.scope) };
}

/**
 * Records in the run's scope what a command's own scope holds (the revisions it read and wrote
 * last), as a store records a run's own writes, so a later overwrite through the run's scope is
 * authorized as it would be had the run written the file directly.
 */
export function adopt(run: Runner, own: Scope): void {
  if (run.scope === null) return;
  for (const [namespace, keys] of Object.entries(own.snapshot().revisions)) {
    for (const [key, revision] of Object.entries(keys)) run.scope.record(namespace, key, revision);
  }
}

/** Reads a memory file; a store failure is a `CommandError` in the model's terms. */
export async function readFile(store: Store, key: string, call: CallOptions): Promise<Entry> {
  try {
    return await store.read(key, call);
  } catch (e) {
    throw storeError(e, pathOf(key));
  }
}

/**
 * Applies `apply` to the file's current text and writes the result only if the file still holds
 * what was read (a revision-checked write, on every store this library builds, whatever its
 * read-before-update default); when another writer came first, waits a little, reads again and
 * re-applies, at most `EDIT_ATTEMPTS` times. `apply` throws to refuse the edit, and then nothing
 * is written. Returns the text written.
 */
export async function editFile(
  run: Runner,
  key: string,
  apply: (text: string) => string,
): Promise<string> {
  const path = pathOf(key);
  for (let attempt = 1;; attempt++) {
    const call = ownCall(run);
    const entry = await readFile(run.store, key, call);
    keepTaint(run.scope, call.scope);
    const text = apply(entry.content);
    // A description that came from the text follows it; one written otherwise stays.
    const description = entry.description === describeText(entry.content)
      ? describeText(text)
      : entry.description;
    try {
      await run.store.update(key, description, text, checkedCall(call));
      adopt(run, call.scope);
      noteWrite(run.who.owner, run.who.store, key, true);
      return text;
    } catch (e) {
      if (!(e instanceof MemoryError && e.code === "stale") || attempt >= EDIT_ATTEMPTS) {
        throw storeError(e, path);
      }
    }
    await pause(attempt, run.signal);
  }
}

/**
 * `rename`: creates `to` with exactly what `from` held when read, then deletes `from` only if it
 * still holds that (a revision-checked delete). When `from` changed or went in between, the copy
 * is taken back (unless it was changed meanwhile too) and the rename fails as stale, so no edit
 * racing the rename is lost.
 */
export async function renameFile(run: Runner, from: string, to: string): Promise<void> {
  const [fromPath, toPath] = [pathOf(from), pathOf(to)];
  const call = ownCall(run);
  const entry = await readFile(run.store, from, call);
  keepTaint(run.scope, call.scope);
  try {
    await run.store.create(to, entry.description, entry.content, call);
  } catch (e) {
    throw storeError(e, toPath, `The destination ${toPath} already exists`);
  }
  try {
    await run.store.delete(from, checkedCall(call));
  } catch (e) {
    if (!(e instanceof MemoryError && e.code === "stale")) throw storeError(e, fromPath);
    let kept = false;
    try {
      await run.store.delete(to, checkedCall(call));
    } catch {
      kept = true;
    }
    throw new CommandError(
      `The file ${fromPath} changed while it was being renamed, so it was not renamed` +
        (kept ? ` (${toPath} holds a copy of what it held before, edited since)` : "") +
        `. View it and try again.`,
      "stale",
    );
  }
  adopt(run, call.scope);
  noteWrite(run.who.owner, run.who.store, to, true);
  noteWrite(run.who.owner, run.who.store, from, false);
}

// A pause before attempt `attempt + 1`: random, growing with each attempt up to
// MAX_EDIT_PAUSE_MS, so writers that collided spread out instead of colliding again.
function pause(attempt: number, signal: AbortSignal | undefined): Promise<void> {
  const ms = Math.random() * Math.min(MAX_EDIT_PAUSE_MS, 2 ** attempt);
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener("abort", stop);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", stop, { once: true });
  });
}

// Each command makes an `execute_tool memory` span, with the command and its outcome: "ok", a
// store error code, or "refused" for a command the SDK's own tool would refuse too.
export function traced<C, X>(
  backend: string,
  command: string,
  run: (c: C, context?: X) => Promise<string>,
): (c: C, context?: X) => Promise<string> {
  return (c, context) =>
    withSpan(
      "execute_tool memory",
      {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "memory",
        "memory.backend": backend,
        "memory.operation": `memory.${command}`,
      },
      async (): Promise<Traced> => {
        try {
          if (c === null || typeof c !== "object" || Array.isArray(c)) {
            throw new CommandError(
              `The ${command} command's input must be a JSON object, as the memory tool defines it`,
            );
          }
          return { ok: true, text: await run(c, context) };
        } catch (e) {
          return { ok: false, error: e instanceof CommandError ? e : storeError(e, ROOT) };
        }
      },
      (r) => r.ok ? "ok" : r.error.outcome,
    ).then((r) => {
      if (!r.ok) throw r.error;
      return r.text;
    });
}

type Traced = { readonly ok: true; readonly text: string } | {
  readonly ok: false;
  readonly error: CommandError;
};
