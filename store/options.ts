/**
 * Strict decoding of a backend's options block, shared by every backend so the rules cannot
 * drift between them.
 *
 * @module
 */

import { ConfigError } from "./errors.ts";
import { allowedText, readOptionFields } from "./_option_fields.ts";
import { describeType, quote } from "./_text.ts";

/** The JSON types an option can take. */
export type OptionType = "string" | "boolean" | "number";

/** One option of a backend: its type, whether it must be given, and what it is for. */
export interface OptionSpec {
  /** The JSON type the value must have. */
  readonly type: OptionType;
  /** `true` when decoding fails without it. */
  readonly required?: boolean;
  /** A short sentence for error messages and docs. */
  readonly description?: string;
}

/** A backend's options: name → spec. */
export type OptionsSchema = Readonly<Record<string, OptionSpec>>;

/** The TypeScript type of an option of JSON type `T`. */
export type OptionValue<T extends OptionType> = T extends "string" ? string
  : T extends "boolean" ? boolean
  : number;
/** The names of a schema's required options. */
export type RequiredOptionKeys<S extends OptionsSchema> = {
  [K in keyof S]: S[K] extends { readonly required: true } ? K : never;
}[keyof S];

/** The decoded options for a schema: required options present, the others optional. */
export type DecodedOptions<S extends OptionsSchema> =
  & { [K in RequiredOptionKeys<S>]: OptionValue<S[K]["type"]> }
  & { [K in Exclude<keyof S, RequiredOptionKeys<S>>]?: OptionValue<S[K]["type"]> };

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
  const allowed = Object.keys(schema);
  const fail = (problem: string) =>
    new ConfigError(`[memory:${backend}] Invalid options for the ${backend} backend: ${problem}`);
  const out = readOptionFields(raw ?? undefined, allowed, fail);
  for (const [key, value] of Object.entries(out)) {
    const spec = schema[key]!;
    const ok = spec.type === "number"
      ? typeof value === "number" && Number.isFinite(value)
      : spec.type === "string"
      ? typeof value === "string"
      : typeof value === "boolean";
    if (!ok) {
      throw fail(`option ${quote(key)} must be a ${spec.type}, got ${describeType(value)}`);
    }
  }
  for (const [key, spec] of Object.entries(schema)) {
    if (spec.required && !Object.hasOwn(out, key)) {
      throw fail(`missing required option ${quote(key)}; ${allowedText(allowed)}`);
    }
  }
  return out as DecodedOptions<S>;
}
