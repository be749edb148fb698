// npm:yaml's parser reads `process.env.LOG_TOKENS` and `process.env.LOG_STREAM` for every token.
// Under Deno that read needs `--allow-env` (or prompts for it), and would make every stored
// memory look corrupt to a program run without it. Parsing is synchronous, so for its duration
// the parser is shown an empty environment; nothing else can run in between.

import process from "node:process";
import { parse } from "yaml";

const EMPTY_ENV: Record<string, string> = Object.freeze({}) as Record<string, string>;
// Deno's permission errors, looked up without naming the global: Node and Bun have no `Deno`.
type ErrorClass = abstract new (...args: never[]) => Error;
const PERMISSION_ERRORS: readonly ErrorClass[] = (() => {
  const errors = (globalThis as { Deno?: { errors?: Record<string, ErrorClass | undefined> } })
    .Deno?.errors;
  return [errors?.NotCapable, errors?.PermissionDenied].filter((c) => c !== undefined);
})();
const OPTIONS = {
  schema: "core",
  maxAliasCount: 0,
  prettyErrors: false,
  logLevel: "error",
} as const;

/**
 * Parses YAML text without touching the process environment. Returns `undefined` when the text
 * is not valid YAML (including aliases, which are refused); a permission failure is thrown, so it
 * can never pass for a corrupt entry.
 */
export function parseYaml(text: string): { value: unknown } | undefined {
  const env = process.env;
  process.env = EMPTY_ENV;
  try {
    return { value: parse(text, OPTIONS) };
  } catch (e) {
    if (PERMISSION_ERRORS.some((c) => e instanceof c)) throw e;
    return undefined;
  } finally {
    process.env = env;
  }
}

// The header shapes the serializer writes for everyday descriptions, read without the YAML parser
// (which costs about a hundred times more). Each admits only text that YAML's core schema reads as
// exactly the characters shown; anything else, however valid, goes to the parser. A property test
// checks this reading against the parser's.
//
// A double-quoted scalar holding no quote, no backslash (so no escapes) and no control, format,
// unassigned or line-breaking character:
const CANONICAL_QUOTED = /^description: "((?:[^"\\\p{C}\s]| )*)"\n$/u;
// A single-quoted scalar holding no quote (so no '' escape) and, likewise, no special character;
// a backslash is literal there.
const CANONICAL_SINGLE = /^description: '((?:[^'\p{C}\s]| )*)'\n$/u;
// A plain scalar that starts with a letter or digit (so it is no indicator), holds no ":" or "#"
// (so no mapping or comment), no white space but spaces, and ends on a non-space. The core
// schema's null and booleans, and anything starting with a digit but holding no space (which may
// be a number), are left to the parser.
const CANONICAL_PLAIN = /^description: ([\p{L}\p{N}](?:(?:[^\p{C}\s:#]| )*[^\p{C}\s:#])?)\n$/u;
const NOT_PLAIN_TEXT = /^(?:null|true|false|\p{N}[^ ]*)$/iu;

/**
 * The description in a one-line header of a canonical shape, or `undefined` when the header needs
 * the real parser.
 */
export function readCanonicalHeader(yaml: string): string | undefined {
  const quoted = CANONICAL_QUOTED.exec(yaml);
  if (quoted) return quoted[1];
  const single = CANONICAL_SINGLE.exec(yaml);
  if (single) return single[1];
  const plain = CANONICAL_PLAIN.exec(yaml);
  if (plain && !NOT_PLAIN_TEXT.test(plain[1] as string)) return plain[1];
  return undefined;
}

/**
 * The header line for `description` in a canonical shape (plain, else double-quoted), when one
 * reads back as exactly `description`; `undefined` when only the YAML library can write it.
 */
export function writeCanonicalHeader(description: string): string | undefined {
  const plain = `description: ${description}\n`;
  if (readCanonicalHeader(plain) === description) return plain;
  const quoted = `description: "${description}"\n`;
  if (readCanonicalHeader(quoted) === description) return quoted;
  return undefined;
}
