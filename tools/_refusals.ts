// How a refused or failed memory tool call reads to the model. A store's own message is never
// shown: it is written for operators and may name hosts or paths.

import { type BudgetError, MemoryError } from "../store/errors.ts";
import { MAX_CONTENT_BYTES, MAX_DESCRIPTION_RUNES, MAX_ENTRIES } from "../store/limits.ts";
import type { CallOptions } from "../store/types.ts";
import { LEGAL_KEY } from "../store/validate.ts";
import { quote } from "../store/text.ts";
import { entryLines, frame } from "./_frame.ts";
import { DELETE, LIST, READ, WRITE } from "./_names.ts";
import { type Context, type Outcome, refuse, withoutScope, writers } from "./_memory_tool.ts";
import { writerOf } from "./_writers.ts";
import { ruleFor } from "./_key_rules.ts";
import { ReviewQueueFullError } from "../store/hold.ts";

/**
 * The refusal of a write or delete of a protected key (`memoryTools(store, { protect })`), or
 * `undefined` when no rule names `key`. Made before the store is touched.
 */
export function protectedRefusal(
  ctx: Context,
  key: string,
  unchanged: string,
): Outcome | undefined {
  const rule = ruleFor(ctx.protect, key);
  if (rule === undefined) return undefined;
  return refuse(
    "protected",
    `Refused: memory ${quote(key)} is protected in this run (${ruleText(rule)}): you may read ` +
      `it with ${READ}, but not write or delete it.${unchanged}`,
  );
}

/** A protect rule in words. */
export function ruleText(rule: string): string {
  return rule.endsWith(".")
    ? `rule ${quote(rule)} protects every key that starts with it`
    : `rule ${quote(rule)} protects this key`;
}

/**
 * What the model is told of a write the store held for review (store option `review`): done, as
 * far as this run goes; not a failure, and nothing to retry. `what`: "Your change to memory
 * \"x\"".
 */
export function heldOutcome(what: string): Outcome {
  return { isError: false, content: `${what} ${HELD_TEXT}`, outcome: "held" };
}

/** The words for a held write, shared by every tool. */
export const HELD_TEXT = "is held for review by an operator; other runs will not see it until " +
  "it is approved. It is recorded: do not write it again.";

/** The refusal when the review queue is full. */
export const QUEUE_FULL_TEXT = "Refused: the review queue is full, so this change could not be " +
  "held for an operator. Nothing was written. Continue without it; do not retry now.";

/** A write or delete refused by the run's budget, in the model's terms. */
export function budgetText(e: BudgetError): string {
  const deletes = e.kind === "deletes";
  const n = `${e.limit} ${e.limit === 1 ? e.kind.slice(0, -1) : e.kind}`;
  return `Refused: this run has used its ${n}, all its budget allows, so memory cannot be ` +
    `${deletes ? "deleted from" : "written"} again in this run. Nothing was ` +
    `${deletes ? "deleted" : "written"}. Do not retry; continue without it.`;
}

// The colliding memory's description, found by one extra read, so the model can decide without
// another call. The read goes without the run's scope: seeing a description is not reading the
// memory, and must not authorize an overwrite.
export async function existsRefusal(
  ctx: Context,
  key: string,
  call: CallOptions,
): Promise<Outcome> {
  const how = `To keep both, save this one under another key. To replace the existing memory, ` +
    `call ${READ} with key ${quote(key)} first, then call ${WRITE} again with "overwrite": true.`;
  let description: string;
  try {
    description = (await ctx.store.read(key, withoutScope(call))).description;
  } catch (e) {
    if (e instanceof MemoryError && e.code === "not_found") {
      return refuse(
        "exists",
        `Refused: memory ${quote(key)} existed when you wrote, and has been deleted since. ` +
          `Nothing was written. Call ${WRITE} again to create it.`,
      );
    }
    return refuse(
      "exists",
      `Refused: a memory with key ${quote(key)} already exists (its description could not be ` +
        `read just now). Nothing was written. ${how}`,
    );
  }
  const { text } = frame("MEMORY DATA", entryLines(key, description), writerOf(writers(ctx), key));
  return refuse(
    "exists",
    `Refused: a memory with key ${quote(key)} already exists. Nothing was written. ` +
      `The existing memory:\n${text}\n${how}`,
  );
}

// Our own validation, run before the store is touched: its messages say what is wrong and what
// is legal, and hold nothing but the model's own (quoted, shortened) input.
export function validationRefusal(check: () => unknown, after: string): Outcome | undefined {
  try {
    check();
    return undefined;
  } catch (e) {
    if (e instanceof MemoryError) return refuse(e.code, `Refused: ${e.message}.${after}`);
    throw e;
  }
}

export interface Failed {
  readonly tool: string;
  readonly key: string | undefined;
  readonly readOnly: boolean;
}

// A store failure in the model's terms. A store's own message is never shown: it is written for
// operators and may name hosts or paths.
export function failure(e: unknown, { tool, key, readOnly }: Failed): Outcome {
  const code = e instanceof MemoryError ? e.code : "error";
  const k = key === undefined ? "" : quote(key);
  const writing = tool === WRITE || tool === DELETE;
  switch (code) {
    case "not_found":
      return refuse(code, `No memory has key ${k}. Call ${LIST} to see the saved keys.`);
    case "stale":
      return refuse(
        code,
        `Refused: this run may not replace memory ${k} yet, because it has not read the ` +
          `memory's current version (it was never read in this run, or it changed since). ` +
          `Nothing was written. Call ${READ} with key ${k}, check what it holds now, then call ` +
          `${WRITE} again with "overwrite": true.`,
      );
    case "capacity":
      if (e instanceof ReviewQueueFullError) return refuse(code, QUEUE_FULL_TEXT);
      return refuse(
        code,
        `Refused: memory is full (${MAX_ENTRIES} memories, the most it holds). Nothing was ` +
          `written. Delete a memory you no longer need with ${DELETE}, or replace one.`,
      );
    case "invalid_key":
      return refuse(code, `Refused: the store does not accept key ${k}; a key is ${LEGAL_KEY}.`);
    case "invalid_description":
    case "invalid_content":
    case "too_large":
      return refuse(
        code,
        `Refused: the store does not accept this memory. A description is one line of at most ` +
          `${MAX_DESCRIPTION_RUNES} characters; a body is at most ${MAX_CONTENT_BYTES} bytes of ` +
          `UTF-8 text. Nothing was written.`,
      );
    case "corrupt":
      return refuse(
        code,
        `Memory ${k} cannot be read: what is stored under it is damaged.` +
          (readOnly ? "" : ` You can delete it with ${DELETE} or replace it.`),
      );
    case "read_only":
      return refuse(code, `Refused: memory is read-only in this run. Nothing was changed.`);
    case "budget":
      return refuse(code, budgetText(e as BudgetError));
    default:
      return refuse(
        code,
        `The memory store is temporarily unavailable, so ${tool} did not complete. This is not ` +
          `caused by your arguments; you may retry later or continue without it.` +
          (writing && key !== undefined
            ? ` It is not known whether the change took effect; call ${READ} with key ${k} ` +
              `to check before retrying.`
            : ""),
      );
  }
}
