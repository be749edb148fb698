// Lists of key rules, as the tools' options take them (`pin`, `protect`): exact keys, or key
// prefixes ending in "." (`"user."`). One check and one match for every option that takes them.

import { ConfigError } from "../store/errors.ts";
import { validateKey } from "../store/validate.ts";
import { quote } from "../store/text.ts";

/**
 * Checks the option `option` of `action`: an array of legal keys or key prefixes ending in ".".
 * `undefined` is none.
 *
 * @throws {ConfigError} naming the entry and what a legal one looks like.
 */
export function checkKeyRules(action: string, option: string, rules: unknown): readonly string[] {
  if (rules === undefined) return [];
  const fail = (problem: string) =>
    new ConfigError(
      `Cannot ${action}: option ${quote(option)} ${problem}; it takes legal keys, or key ` +
        `prefixes ending in "." such as "user."`,
    );
  if (!Array.isArray(rules)) throw fail("must be an array of strings");
  for (const rule of rules) {
    if (typeof rule !== "string") throw fail(`holds ${quote(rule)}, not a string`);
    try {
      validateKey(rule.endsWith(".") ? `${rule}x` : rule);
    } catch {
      throw fail(`holds ${quote(rule)}, which is neither a legal key nor a key prefix`);
    }
  }
  return Object.freeze([...rules]);
}

/** Whether `rule` names `key`: the key itself, or a prefix of it ending in ".". */
export function ruleNames(rule: string, key: string): boolean {
  return rule.endsWith(".") ? key.startsWith(rule) : key === rule;
}

/** The keys `rules` name, in words: `"owner" and every key that starts with "policy."`. */
export function rulesText(rules: readonly string[]): string {
  const words = rules.map((r) =>
    r.endsWith(".") ? `every key that starts with ${quote(r)}` : quote(r)
  );
  return words.length <= 1
    ? words.join("")
    : `${words.slice(0, -1).join(", ")} and ${words.at(-1)}`;
}

/** The first of `rules` that names `key`, or `undefined`. */
export function ruleFor(rules: readonly string[], key: string): string | undefined {
  return rules.find((rule) => ruleNames(rule, key));
}
