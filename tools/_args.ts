// Checks a model's tool arguments against the tool's fields before anything else runs. The model
// can send any JSON value; the answer names what was wrong and what the tool takes.

import { describeType, quote } from "../store/text.ts";

/** One argument a tool takes: its JSON type and whether it must be given. */
export interface Field {
  /** `"integer"` takes a non-negative safe integer. */
  readonly type: "string" | "boolean" | "integer";
  readonly required: boolean;
}

/** A tool's arguments: name → field. */
export type Fields = Readonly<Record<string, Field>>;

const MAX_REPORTED = 3;

/** `true` for an object literal or `Object.create(null)`; arrays and class instances are not. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function hasType(value: unknown, type: Field["type"]): boolean {
  if (type === "integer") return Number.isSafeInteger(value) && (value as number) >= 0;
  return type === "string" ? typeof value === "string" : typeof value === "boolean";
}

/** How a tool's arguments look, for messages: `{"key": string, "overwrite"?: boolean}`. */
export function signature(fields: Fields): string {
  const parts = Object.entries(fields).map(([name, f]) =>
    `"${name}"${f.required ? "" : "?"}: ${f.type}`
  );
  return parts.length === 0 ? "no arguments: send {}" : `{${parts.join(", ")}}`;
}

/**
 * The arguments as a prototype-free record of own fields, or a sentence saying what is wrong.
 * Only own enumerable string keys are looked at, so `__proto__` or an inherited field is either
 * an unknown field or invisible, never a value.
 */
export function checkArgs(
  tool: string,
  input: unknown,
  fields: Fields,
): Record<string, unknown> | string {
  const takes = `${tool} takes ${signature(fields)}`;
  if (input === undefined) input = {};
  if (!isPlainObject(input)) {
    return `the arguments for ${tool} must be a JSON object, got ${describeType(input)}; ${takes}`;
  }
  const problems: string[] = [];
  const unknown = Object.keys(input).filter((k) => !Object.hasOwn(fields, k));
  if (unknown.length > 0) {
    const shown = unknown.slice(0, MAX_REPORTED).map((k) => quote(k)).join(", ");
    const more = unknown.length > MAX_REPORTED ? ` and ${unknown.length - MAX_REPORTED} more` : "";
    problems.push(`unknown field${unknown.length === 1 ? "" : "s"} ${shown}${more}`);
  }
  const args: Record<string, unknown> = Object.create(null);
  for (const [name, field] of Object.entries(fields)) {
    // An optional field sent as null is omitted: OpenAI's strict mode makes every field
    // required and has the model send null for one it leaves out.
    const present = Object.hasOwn(input, name) && !(input[name] === null && !field.required);
    const value = present ? input[name] : undefined;
    if (!present) {
      if (field.required) problems.push(`missing field "${name}"`);
    } else if (!hasType(value, field.type)) {
      const want = field.type === "integer" ? "non-negative integer" : field.type;
      problems.push(`field "${name}" must be a ${want}, got ${describeType(value)}`);
    } else {
      args[name] = value;
    }
  }
  if (problems.length > 0) {
    return `the arguments do not fit ${tool}: ${problems.join("; ")}. ${takes}`;
  }
  return args;
}
