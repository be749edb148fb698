// npm:yaml's parser reads `process.env.LOG_TOKENS` and `process.env.LOG_STREAM` for every token.
// Under Deno that read needs `--allow-env` (or prompts for it), and would make every stored
// memory look corrupt to a program run without it. Parsing is synchronous, so for its duration
// the parser is shown an empty environment; nothing else can run in between.

import process from "node:process";
import { parse } from "yaml";

const EMPTY_ENV: Record<string, string> = Object.freeze({}) as Record<string, string>;
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
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) throw e;
    return undefined;
  } finally {
    process.env = env;
  }
}
