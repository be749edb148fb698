/**
 * Strict decoding of a backend's options block, shared by every backend so the rules cannot
 * drift between them.
 *
 * @module
 */

import { ConfigError } from "./errors.ts";
import { describeType, errorKind, quote } from "./_text.ts";

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
  const allowedText = allowed.length === 0
    ? "it takes no options"
    : `allowed options: ${allowed.map((k) => quote(k)).join(", ")}`;
  const fail = (problem: string) =>
    new ConfigError(`[memory:${backend}] Invalid options for the ${backend} backend: ${problem}`);
  if (raw === undefined || raw === null) raw = {};
  try {
    return decodeObject(raw, schema, allowedText, fail);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    // A getter that throws, a Proxy trap, a revoked Proxy: the block cannot be read.
    throw fail(
      `reading the options failed (${errorKind(e)}); ${allowedText}`,
    );
  }
}

function decodeObject<S extends OptionsSchema>(
  raw: unknown,
  schema: S,
  allowedText: string,
  fail: (problem: string) => ConfigError,
): DecodedOptions<S> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw fail(`expected an object, got ${describeType(raw)}; ${allowedText}`);
  }
  // A Map, a Date or a class instance has no own entries to read, or not the ones it appears
  // to have: reading it as {} would silently drop the operator's settings.
  const proto = Object.getPrototypeOf(raw);
  if (proto !== Object.prototype && proto !== null) {
    throw fail(`expected a plain object, got ${instanceName(proto)}; ${allowedText}`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const spec = Object.hasOwn(schema, key) ? schema[key] : undefined;
    if (spec === undefined) throw fail(`unknown option ${quote(key)}; ${allowedText}`);
    if (value === undefined) continue;
    const ok = spec.type === "number"
      ? typeof value === "number" && Number.isFinite(value)
      : spec.type === "string"
      ? typeof value === "string"
      : typeof value === "boolean";
    if (!ok) {
      throw fail(`option ${quote(key)} must be a ${spec.type}, got ${describeType(value)}`);
    }
    Object.defineProperty(out, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  for (const [key, spec] of Object.entries(schema)) {
    if (spec.required && !Object.hasOwn(out, key)) {
      throw fail(`missing required option ${quote(key)}; ${allowedText}`);
    }
  }
  return out as DecodedOptions<S>;
}

function instanceName(proto: object): string {
  const name = Object.getOwnPropertyDescriptor(proto, "constructor")?.value?.name;
  return typeof name === "string" && /^[A-Za-z_$][\w$]{0,63}$/.test(name)
    ? `an instance of ${name}`
    : "an object with a custom prototype";
}
