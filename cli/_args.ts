// Command-line parsing with the CLI's own error messages: every mistake is a UsageError (exit 2)
// that says what was wrong in the operator's terms and, for a typo, what was meant.

import { quoted } from "./_output.ts";

/** An option: `--name value` (string) or `--name` (boolean). */
export interface OptionSpec {
  readonly kind: "string" | "boolean";
  /** What the value is, in help: `<key>`, `<n>`. */
  readonly value?: string;
  /** One line of help. */
  readonly help: string;
  /** The command refuses to run without it. */
  readonly required?: boolean;
}

/** A mistake in how the CLI was called: exit status 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Option values given as text, each optional: what a command reads of its `--name value` options. */
export type TextOptions<K extends string> = { readonly [P in K]?: string | undefined };

/** The parsed command line. */
export interface Args {
  /** Option values by name (`true` for a boolean given). */
  readonly options: Readonly<Record<string, string | boolean>>;
  /** The positional arguments, the command first. */
  readonly positionals: readonly string[];
}

/**
 * Parses `argv` against the options any command takes (`known`): `--name value`, `--name=value`,
 * `-h`, and `--` ending the options. An unknown option is matched, for a suggestion, against the
 * options of the command the words before it name (`takenBy`) first, then against all.
 *
 * @throws {UsageError} on an unknown option (with the nearest known one), a missing or unexpected
 * value, or a repeat.
 */
export function parseArgs(
  argv: readonly string[],
  o: {
    readonly known: Readonly<Record<string, OptionSpec>>;
    readonly takenBy?: (words: readonly string[]) => readonly string[] | undefined;
  },
): Args {
  const { known, takenBy = () => undefined } = o;
  const options: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === "-h") {
      options.help = true;
      continue;
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    if (!arg.startsWith("--")) throw new UsageError(`unknown option ${quoted(arg)}`);
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const kind = Object.hasOwn(known, name) ? known[name]!.kind : undefined;
    if (kind === undefined) {
      const own = takenBy(positionals);
      const near = (own === undefined ? undefined : nearest(name, own)) ??
        nearest(name, Object.keys(known));
      throw new UsageError(
        `unknown option ${quoted(`--${name}`)}${
          near === undefined ? "" : ` (did you mean --${near}?)`
        }`,
      );
    }
    if (Object.hasOwn(options, name)) throw new UsageError(`option --${name} is given twice`);
    if (kind === "boolean") {
      if (eq >= 0) throw new UsageError(`option --${name} takes no value`);
      options[name] = true;
      continue;
    }
    if (eq >= 0) {
      options[name] = arg.slice(eq + 1);
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined || (value.startsWith("--") && value.length > 2)) {
      throw new UsageError(
        `option --${name} needs a value (write --${name}=VALUE for a value that starts with "--")`,
      );
    }
    options[name] = value;
    i++;
  }
  return { options, positionals };
}

/**
 * The candidate `word` most likely stands for, when it is near enough to be a typo or a shortening:
 * the one fewest single-character edits away (a swap of two neighbours counting as one; at most 1
 * edit for a word of up to 4 characters, 2 for a longer one), else the only candidate that starts
 * with it (`dry` for `dry-run`). `undefined` when none is.
 */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  const most = w.length <= 4 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = most + 1;
  for (const c of candidates) {
    const d = editDistance(w, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  if (best !== undefined || w.length < 2) return best;
  const starting = candidates.filter((c) => c.startsWith(w));
  return starting.length === 1 ? starting[0] : undefined;
}

// Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps.
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return Infinity;
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length)]);
  for (let j = 0; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}
