// How every constructor in tools/ reads its options: the shape check shared with the backends'
// decodeOptions (a plain object, no unknown keys, each field read once), then typed fields. Every
// problem is a ConfigError that says who is complaining: "Cannot make the memory tools: ...".

import { ConfigError } from "../store/errors.ts";
import { readOptionFields } from "../store/option_fields.ts";
import { describeType, quote } from "../store/text.ts";

/** The fields of one options object, and typed readers that fail in the caller's words. */
export interface ToolOptions {
  /** The fields given (an `undefined` value counts as not given). */
  readonly fields: Readonly<Record<string, unknown>>;
  /** A `ConfigError` starting "Cannot <action>: ". */
  fail(problem: string): ConfigError;
  /** A boolean field, or `undefined` when not given. */
  boolean(name: string): boolean | undefined;
  /** An integer field of at least `min`, or `fallback` when not given. */
  integer(name: string, min: number, fallback: number): number;
  /** A field that must be a function, or `undefined` when not given; `what` names it. */
  func<F>(name: string, what: string): F | undefined;
}

/**
 * Reads `raw` as the options of `action` ("make the memory tools", say), allowing `allowed`.
 *
 * @throws {ConfigError} naming the unknown option and the allowed ones, or why the object cannot
 * be read.
 */
export function readToolOptions(
  action: string,
  raw: unknown,
  allowed: readonly string[],
): ToolOptions {
  const fail = (problem: string) => new ConfigError(`Cannot ${action}: ${problem}`);
  const fields = readOptionFields(raw, allowed, (problem) => fail(`options: ${problem}`));
  return {
    fields,
    fail,
    boolean(name) {
      const value = fields[name];
      if (value !== undefined && typeof value !== "boolean") {
        throw fail(`option ${quote(name)} must be a boolean, got ${describeType(value)}`);
      }
      return value;
    },
    integer(name, min, fallback) {
      const value = fields[name] ?? fallback;
      if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
        throw fail(
          `option ${quote(name)} must be an integer of at least ${min}, got ${
            typeof value === "number" ? value : describeType(value)
          }`,
        );
      }
      return value;
    },
    func<F>(name: string, what: string) {
      const value = fields[name];
      if (value !== undefined && typeof value !== "function") {
        throw fail(`option ${quote(name)} must be ${what}, got ${describeType(value)}`);
      }
      return value as F | undefined;
    },
  };
}
