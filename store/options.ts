/**
 * Strict decoding of a backend's options block, shared by every backend so the rules cannot
 * drift between them.
 *
 * @module
 */

import { ConfigError } from "./errors.ts";
import { allowedText, readOptionFields } from "./option_fields.ts";
import { describeType, quote } from "./text.ts";

/** The JSON types an option can take. */
export type OptionType = "string" | "boolean" | "number" | "object";

/** One option of a backend: its type, whether it must be given, and what it is for. */
export interface OptionSpec {
  /** The JSON type the value must have, or the types it may have. */
  readonly type: OptionType | readonly OptionType[];
  /** For an `"object"` option: its own options, decoded by the same strict rules. */
  readonly fields?: OptionsSchema;
  /** `true` when decoding fails without it. */
  readonly required?: boolean;
  /** A short sentence for error messages and docs. */
  readonly description?: string;
}

/** A backend's options: name → spec. */
export type OptionsSchema = Readonly<Record<string, OptionSpec>>;

/** The TypeScript type of an option of JSON type `T` (`F`: an object option's fields). */
export type OptionValue<T extends OptionType, F extends OptionsSchema = OptionsSchema> = T extends
  "string" ? string
  : T extends "boolean" ? boolean
  : T extends "number" ? number
  : DecodedOptions<F>;

/** The TypeScript type of an option with spec `S`. */
export type SpecValue<S extends OptionSpec> = S["type"] extends readonly OptionType[]
  ? OptionValue<S["type"][number], S["fields"] extends OptionsSchema ? S["fields"] : OptionsSchema>
  : OptionValue<
    S["type"] & OptionType,
    S["fields"] extends OptionsSchema ? S["fields"] : OptionsSchema
  >;
/** The names of a schema's required options. */
export type RequiredOptionKeys<S extends OptionsSchema> = {
  [K in keyof S]: S[K] extends { readonly required: true } ? K : never;
}[keyof S];

/** The decoded options for a schema: required options present, the others optional. */
export type DecodedOptions<S extends OptionsSchema> =
  & { [K in RequiredOptionKeys<S>]: SpecValue<S[K]> }
  & { [K in Exclude<keyof S, RequiredOptionKeys<S>>]?: SpecValue<S[K]> };

/**
 * Decodes a backend's options strictly: the block must be a plain object, every key must be one
 * the backend declares, every value must have the declared type, and every required option must
 * be present. A declared key whose value is `undefined` counts as absent; an unknown key is
 * refused whatever its value. Every backend fails the same way, naming the key and the allowed
 * ones.
 *
 * @example An unknown key
 * ```ts
 * import { ConfigError, decodeOptions } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const schema = { dir: { type: "string", required: true } } as const;
 * assert.deepEqual(decodeOptions("file", { dir: "/tmp/m" }, schema), { dir: "/tmp/m" });
 * assert.throws(() => decodeOptions("file", { dri: "/tmp/m" }, schema), ConfigError);
 * ```
 *
 * @param backend The backend's name, for error messages.
 * @param raw The options block as configured.
 * @param schema The options the backend accepts.
 * @returns The decoded options.
 * @throws {ConfigError} on an unknown key, a wrong type or a missing required option.
 */
export function decodeOptions<S extends OptionsSchema>(
  backend: string,
  raw: unknown,
  schema: S,
): DecodedOptions<S> {
  const fail = (problem: string) =>
    new ConfigError(`[memory:${backend}] Invalid options for the ${backend} backend: ${problem}`);
  return decodeObject(raw ?? undefined, schema, allowedText(Object.keys(schema)), fail);
}

function decodeObject<S extends OptionsSchema>(
  raw: unknown,
  schema: S,
  allowedList: string,
  fail: (problem: string) => ConfigError,
  path = "",
): DecodedOptions<S> {
  // The shape every options object must have (shared with the tools' options).
  const given = readOptionFields(raw, Object.keys(schema), fail, {
    path,
    allowedText: allowedList,
  });
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(given)) {
    const spec = schema[key]!;
    const types: readonly OptionType[] = typeof spec.type === "string" ? [spec.type] : spec.type;
    const type = types.find((t) => hasType(value, t));
    if (type === undefined) {
      throw fail(
        `option ${quote(path + key)} must be ${types.map(article).join(" or ")}, got ${
          describeType(value)
        }`,
      );
    }
    const fields = spec.fields ?? {};
    const decoded = type === "object"
      ? decodeObject(value, fields, allowedFor(path + key, fields), fail, `${path}${key}.`)
      : value;
    Object.defineProperty(out, key, {
      value: decoded,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  for (const [key, spec] of Object.entries(schema)) {
    if (spec.required && !Object.hasOwn(out, key)) {
      throw fail(`missing required option ${quote(path + key)}; ${allowedList}`);
    }
  }
  return out as DecodedOptions<S>;
}

function hasType(value: unknown, type: OptionType): boolean {
  switch (type) {
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "string":
      return typeof value === "string";
    case "boolean":
      return typeof value === "boolean";
    default:
      return typeof value === "object" && value !== null && !Array.isArray(value);
  }
}

function article(type: OptionType): string {
  return type === "object" ? "an object" : `a ${type}`;
}

function allowedFor(option: string, fields: OptionsSchema): string {
  const names = Object.keys(fields);
  return names.length === 0
    ? `option ${quote(option)} takes no fields`
    : `option ${quote(option)} takes: ${names.map((k) => quote(k)).join(", ")}`;
}
