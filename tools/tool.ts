/**
 * The model-facing tool type and `defineTool`, which every tool goes through.
 *
 * @module
 */

import { ConfigError } from "../store/errors.ts";
import { describeType, quote } from "../store/text.ts";
import { isPlainObject } from "./_args.ts";

/**
 * Which surfaces besides the agent's own model loop may offer a tool. A flag that is absent or
 * `false` keeps the tool off that surface; `{}` keeps it off all of them.
 *
 * The memory tools carry `{}`: a caller on an MCP or A2A endpoint could otherwise plant text that
 * a later run reads back as its own note.
 */
export interface ExposeSpec {
  /** Offer the tool on a Model Context Protocol server. */
  readonly mcp?: boolean | undefined;
  /** Offer the tool to other agents over Agent2Agent (A2A). */
  readonly a2a?: boolean | undefined;
}

/**
 * A tool's input schema: a JSON Schema (draft 2020-12) whose instances are objects. This is the
 * `input_schema` of an Anthropic tool, the `parameters` of an OpenAI function and the
 * `inputSchema` of an MCP tool.
 */
export interface ToolInputSchema {
  /** Always `"object"`: a tool takes named arguments. */
  readonly type: "object";
  /** Each argument's schema. */
  readonly properties?: Readonly<Record<string, unknown>> | undefined;
  /** The arguments that must be given. */
  readonly required?: readonly string[] | undefined;
  /** `false` when arguments not listed in `properties` are refused. */
  readonly additionalProperties?: boolean | undefined;
  /** Any other JSON Schema keyword. */
  readonly [keyword: string]: unknown;
}

/**
 * A tool's input schema as a plain, mutable JSON Schema object: what the adapters hand to an
 * SDK, each a fresh copy.
 */
export interface JsonSchemaObject {
  /** Always `"object"`. */
  type: "object";
  /** Each argument's schema. */
  properties?: Record<string, unknown>;
  /** The arguments that must be given. */
  required?: string[];
  /** `false` when arguments not listed in `properties` are refused. */
  additionalProperties?: boolean;
  /** Any other JSON Schema keyword. */
  [keyword: string]: unknown;
}

/**
 * What a tool call resolves to: the text the model sees, and whether it reports a failure. The
 * shape of both an Anthropic `tool_result` (`content`, `is_error`) and an MCP tool result.
 */
export interface ToolResult {
  /** `true` when the call was refused or failed; the text says why and what to do instead. */
  readonly isError: boolean;
  /** The text the model sees. */
  readonly content: string;
}

/** Per-call options the host passes to `Tool.run`; nothing here comes from the model. */
export interface ToolRunOptions {
  /** Aborting it fails store calls that have not committed yet. */
  readonly signal?: AbortSignal | undefined;
  /** The model's id for this call (`tool_use.id`, `tool_call.id`), recorded on the span. */
  readonly toolCallId?: string | undefined;
}

/**
 * A model-facing tool: a name, a description for the model, a JSON Schema for its input, the
 * surfaces it may be offered on, and `run`.
 *
 * `run` takes the model's arguments as given (an object, or its JSON text as the OpenAI API
 * sends it) and never rejects for anything the model can cause: wrong types, extra fields,
 * huge strings or prototype keys become an error result telling the model what is legal.
 */
export interface Tool {
  /** The name the model calls it by: 1 to 64 characters from `a-z A-Z 0-9 _ -`. */
  readonly name: string;
  /** What the tool does and when to use it, written for the model. */
  readonly description: string;
  /** The JSON Schema of the tool's input. */
  readonly inputSchema: ToolInputSchema;
  /** Which surfaces besides the agent's own loop may offer the tool. */
  readonly expose: ExposeSpec;
  /**
   * Runs the tool on the model's arguments.
   *
   * @param input The arguments: an object, or its JSON text.
   * @param opts The host's per-call options.
   * @returns The result; never rejects for anything the model can cause.
   */
  run(input: unknown, opts?: ToolRunOptions): Promise<ToolResult>;
}

/** What `defineTool` takes: a `Tool`, with `run` free to reject (its rejection becomes a result). */
export interface ToolSpec {
  /** The name the model calls it by: 1 to 64 characters from `a-z A-Z 0-9 _ -`. */
  readonly name: string;
  /** What the tool does and when to use it, written for the model. */
  readonly description: string;
  /** The JSON Schema of the tool's input; `type` must be `"object"`. */
  readonly inputSchema: ToolInputSchema;
  /** Required: which surfaces may offer the tool. Pass `{}` to keep it off MCP and A2A. */
  readonly expose: ExposeSpec;
  /** Runs the tool. Receives the arguments as an object when they arrived as JSON text. */
  run(input: unknown, opts?: ToolRunOptions): Promise<ToolResult> | ToolResult;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const EXPOSE_FLAGS = ["mcp", "a2a"];

/**
 * Defines a tool, checking the spec and making `run` total: arguments given as JSON text are
 * parsed, and a `run` that throws or rejects resolves to an error result that reveals nothing
 * about the failure. The tool is frozen, its schema and expose spec deeply.
 *
 * `expose` is required, so every tool's surface is an explicit choice.
 *
 * @example A tool kept off MCP and A2A
 * ```ts
 * import { defineTool } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const echo = defineTool({
 *   name: "echo",
 *   description: "Repeats the text it is given.",
 *   inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
 *   expose: {},
 *   run: (input) => ({ isError: false, content: String((input as { text: string }).text) }),
 * });
 * assert.deepEqual(await echo.run('{"text":"hi"}'), { isError: false, content: "hi" });
 * // `expose` is required: leaving it out is a type error, and throws at run time.
 * assert.throws(() => defineTool({ ...echo, expose: undefined as never }), /"expose" is missing/);
 * ```
 *
 * @param spec The tool's name, description, input schema, expose spec and `run`.
 * @returns The tool.
 * @throws {ConfigError} when `expose` is missing or malformed, or any other field is invalid.
 */
export function defineTool(spec: ToolSpec): Tool {
  if (spec === null || typeof spec !== "object") {
    throw new ConfigError(
      `Cannot define a tool: expected a spec object, got ${describeType(spec)}`,
    );
  }
  const { name, description, inputSchema, expose, run } = spec;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    throw new ConfigError(
      `Cannot define tool ${quote(name)}: a name is 1 to 64 characters from A-Z a-z 0-9 _ -`,
    );
  }
  const fail = (problem: string) =>
    new ConfigError(`Cannot define tool ${quote(name)}: ${problem}`);
  if (typeof description !== "string" || description.trim() === "") {
    throw fail('"description" must be a non-empty string');
  }
  if (!isPlainObject(inputSchema) || inputSchema.type !== "object") {
    throw fail('"inputSchema" must be a JSON Schema object with "type": "object"');
  }
  if (expose === undefined || expose === null) {
    throw fail(
      '"expose" is missing; say which surfaces may offer it, e.g. {} to keep it off MCP and A2A',
    );
  }
  if (!isPlainObject(expose)) throw fail(`"expose" must be an object, got ${describeType(expose)}`);
  for (const [flag, value] of Object.entries(expose)) {
    if (!EXPOSE_FLAGS.includes(flag)) {
      throw fail(
        `"expose" has the unknown field ${quote(flag)}; allowed fields: ${
          EXPOSE_FLAGS.map((f) => quote(f)).join(", ")
        }`,
      );
    }
    if (value !== undefined && typeof value !== "boolean") {
      throw fail(`"expose.${flag}" must be a boolean, got ${describeType(value)}`);
    }
  }
  if (typeof run !== "function") throw fail('"run" must be a function');
  let schema: ToolInputSchema;
  try {
    schema = deepFreeze(structuredClone(inputSchema));
  } catch {
    throw fail('"inputSchema" must be plain JSON data');
  }
  const tool: Tool = {
    name,
    description,
    inputSchema: schema,
    expose: Object.freeze({ ...expose }),
    run: (input, opts) => runSafely(name, run, input, opts),
  };
  return Object.freeze(tool);
}

async function runSafely(
  name: string,
  run: ToolSpec["run"],
  input: unknown,
  opts: ToolRunOptions | undefined,
): Promise<ToolResult> {
  if (typeof input === "string") {
    try {
      input = JSON.parse(input);
    } catch {
      return {
        isError: true,
        content: `Refused: the arguments for ${name} are not valid JSON. Send a JSON object.`,
      };
    }
  }
  try {
    const result = await run(input, opts);
    if (
      result !== null && typeof result === "object" && typeof result.isError === "boolean" &&
      typeof result.content === "string"
    ) {
      return { isError: result.isError, content: result.content };
    }
  } catch {
    // The failure's text may hold anything (host paths, addresses); the model learns only that
    // the call failed. Hosts see the cause on their own telemetry.
  }
  return {
    isError: true,
    content: `The tool ${name} failed with an internal error. This is not caused by your ` +
      `arguments; you may retry later or continue without it.`,
  };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
