// The frame every memory tool shares: the run's context, argument checking, the span, and the
// outcome recorded on it. Each tool supplies only its fields and a handler.

import type { Span } from "@opentelemetry/api";
import type { Scope } from "../store/scope.ts";
import type { CallOptions, Store } from "../store/types.ts";
import { MAX_KEY_RUNES } from "../store/limits.ts";
import { KEY_PATTERN, LEGAL_KEY, validateKey } from "../store/validate.ts";
import { legalCallId } from "../store/build.ts";
import { withSpan } from "../store/telemetry.ts";
import {
  defineTool,
  type Tool,
  type ToolInputSchema,
  type ToolResult,
  type ToolRunOptions,
} from "./tool.ts";
import { checkArgs, type Field, type Fields } from "./_args.ts";
import { DELETE, WRITE } from "./_names.ts";
import { setOrderKey } from "./_queue.ts";

/** What every memory tool of one run shares. */
export interface Context {
  readonly store: Store;
  readonly backend: string;
  readonly scope: Scope | null;
  readonly readOnly: boolean;
  /** The most characters one memory_list result takes. */
  readonly listMaxChars: number;
  /** Keys the model may read but not write or delete (exact keys, or prefixes ending in "."). */
  readonly protect: readonly string[];
}

// What a handler resolves to: the result, and the outcome recorded on the span.
export interface Outcome {
  readonly isError: boolean;
  readonly content: string;
  readonly outcome: string;
}

export function ok(content: string): Outcome {
  return { isError: false, content, outcome: "ok" };
}

export function refuse(outcome: string, content: string): Outcome {
  return { isError: true, content, outcome };
}

/** One argument's JSON Schema; its `type` is also what the arguments are checked against. */
export interface Property {
  readonly type: Field["type"];
  readonly [keyword: string]: unknown;
}

export interface Definition {
  readonly name: string;
  readonly description: string;
  /** The arguments, as the input schema shows them to the model. */
  readonly properties: Readonly<Record<string, Property>>;
  /** The arguments that must be given. */
  readonly required: readonly string[];
  readonly handle: (args: Record<string, unknown>, call: CallOptions) => Promise<Outcome>;
}

export function memoryTool(ctx: Context, def: Definition): Tool {
  const { required } = def;
  // One source for the model and the check: the schema's properties are the fields.
  const fields: Fields = Object.fromEntries(
    Object.entries(def.properties).map(([name, p]) => [
      name,
      { type: p.type, required: required.includes(name) },
    ]),
  );
  const inputSchema: ToolInputSchema = {
    type: "object",
    properties: def.properties,
    ...(required.length > 0 ? { required: [...required] } : {}),
    additionalProperties: false,
  };
  const unchanged = def.name === WRITE
    ? " Nothing was written."
    : def.name === DELETE
    ? " Nothing was deleted."
    : "";
  // The span wraps the whole call, JSON parsing and the total-run guard of defineTool included,
  // so a call refused before it reaches the handler is traced too. The handler reports its
  // outcome and the key through a per-call record found by the options object it is handed.
  const tool = defineTool({
    name: def.name,
    description: def.description,
    inputSchema,
    expose: {},
    run: async (input: unknown, opts?: ToolRunOptions) => {
      const call = opts === undefined ? undefined : CALLS.get(opts);
      // Until the handler answers, a failure is an internal one; a call that never gets here had
      // arguments that were not JSON.
      if (call !== undefined) call.outcome = "error";
      const args = checkArgs(def.name, input, fields);
      const outcome = typeof args === "string"
        ? refuse("invalid_arguments", `Refused: ${args}.${unchanged}`)
        : await handle(ctx, def, args, call);
      if (call !== undefined) call.outcome = outcome.outcome;
      return outcome;
    },
  });
  const run = (input: unknown, opts?: ToolRunOptions) => {
    const signal = opts?.signal instanceof AbortSignal ? opts.signal : undefined;
    const toolCallId = typeof opts?.toolCallId === "string" ? opts.toolCallId : undefined;
    const callOpts: ToolRunOptions = signal === undefined ? {} : { signal };
    return withSpan(
      `execute_tool ${def.name}`,
      {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": def.name,
        "gen_ai.tool.type": "function",
        ...(toolCallId === undefined ? {} : { "gen_ai.tool.call.id": toolCallId }),
        "memory.backend": ctx.backend,
        "memory.operation": def.name,
      },
      (span) => {
        const call: CallRecord = {
          span,
          signal,
          callId: legalCallId(toolCallId),
          outcome: undefined,
        };
        CALLS.set(callOpts, call);
        return tool.run(input, callOpts).then((result) => ({ result, call }));
      },
      ({ result, call }) => call.outcome ?? (result.isError ? "invalid_arguments" : "ok"),
    ).then(({ result }) => result, () => internalError(def.name));
  };
  const memory = Object.freeze({ ...tool, run });
  // The runners' ordered mode queues this tool's calls behind earlier ones of the same scope.
  setOrderKey(memory, ctx.scope ?? ctx);
  return memory;
}

// One call's span, signal and outcome, keyed by the options object the call hands to defineTool.
interface CallRecord {
  readonly span: Span;
  readonly signal: AbortSignal | undefined;
  /** The model's tool call id, when the store would take it as a `callId`. */
  readonly callId: string | undefined;
  outcome: string | undefined;
}

const CALLS = new WeakMap<object, CallRecord>();

function internalError(name: string): ToolResult {
  return {
    isError: true,
    content: `The tool ${name} failed with an internal error. This is not caused by your ` +
      `arguments; you may retry later or continue without it.`,
  };
}

function handle(
  ctx: Context,
  def: Definition,
  args: Record<string, unknown>,
  call: CallRecord | undefined,
): Promise<Outcome> {
  const key = args.key;
  if (typeof key === "string" && isLegalKey(key)) call?.span.setAttribute("memory.key", key);
  // Every store call carries the write's provenance: this tool's name and the model's call id.
  return def.handle(args, {
    scope: ctx.scope,
    via: def.name,
    ...(call?.signal === undefined ? {} : { signal: call.signal }),
    ...(call?.callId === undefined ? {} : { callId: call.callId }),
  });
}

/** Whose writes a frame of these tools attributes to this run (see `_writers.ts`). */
export function writers(ctx: Context): { owner: object; store: Store; scope: Scope | null } {
  return { owner: ctx.scope ?? ctx, store: ctx.store, scope: ctx.scope };
}

/** `call` without the run's scope: for reads that must grant no authority (a search, a look). */
export function withoutScope(call: CallOptions): CallOptions {
  const { scope: _scope, ...rest } = call;
  return rest;
}

/** Whether `key` is a legal key. */
export function isLegalKey(key: string): boolean {
  try {
    validateKey(key);
    return true;
  } catch {
    return false;
  }
}

/** The JSON Schema of a `key` argument, from the store's own limit and pattern. */
export const KEY_PROPERTY = {
  type: "string",
  minLength: 1,
  maxLength: MAX_KEY_RUNES,
  pattern: KEY_PATTERN,
  description: `The memory's key: ${LEGAL_KEY}. Example: "user.preferences".`,
} as const;
