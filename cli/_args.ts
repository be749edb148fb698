// Command-line parsing with the CLI's own error messages: every mistake is a UsageError (exit 2)
// that says what was wrong in the operator's terms.

import { quoted } from "./_output.ts";

/** A mistake in how the CLI was called: exit status 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

type Kind = "string" | "boolean";

/** Every option, with its type. `-h` is `--help`. */
const OPTIONS: Readonly<Record<string, Kind>> = {
  dir: "string",
  servers: "string",
  bucket: "string",
  prefix: "string",
  creds: "string",
  config: "string",
  description: "string",
  content: "string",
  file: "string",
  overwrite: "boolean",
  "dry-run": "boolean",
  raw: "boolean",
  replicas: "string",
  storage: "string",
  "max-value-size": "string",
  "read-only": "boolean",
  key: "string",
  run: "string",
  actor: "string",
  since: "string",
  until: "string",
  tainted: "boolean",
  limit: "string",
  port: "string",
  host: "string",
  write: "boolean",
  anchor: "string",
  json: "boolean",
  help: "boolean",
  version: "boolean",
};

/** Options every command takes. */
const COMMON = [
  "dir",
  "servers",
  "bucket",
  "prefix",
  "creds",
  "config",
  "read-only",
  "json",
  "help",
  "version",
];

/** The options a command takes besides the common ones. */
const COMMAND_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  info: [],
  list: [],
  read: ["raw"],
  write: ["description", "content", "file", "overwrite"],
  delete: [],
  check: [],
  export: [],
  import: ["overwrite", "dry-run"],
  history: [],
  log: ["key", "run", "actor", "since", "until", "tainted", "limit"],
  show: ["raw"],
  restore: [],
  revert: ["run", "dry-run"],
  serve: ["port", "host", "write", "anchor"],
  "bucket init": ["replicas", "storage", "max-value-size", "dry-run"],
};

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
 * Parses `argv`: `--name value`, `--name=value`, `-h`, and `--` ending the options.
 *
 * @throws {UsageError} on an unknown option, a missing or unexpected value, or a repeat.
 */
export function parseArgs(argv: readonly string[]): Args {
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
    const kind = Object.hasOwn(OPTIONS, name) ? OPTIONS[name] : undefined;
    if (kind === undefined) {
      const near = nearest(name, Object.keys(OPTIONS));
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
 * Checks that every option given belongs to `command` (e.g. `"bucket init"`).
 *
 * @throws {UsageError} naming the first option the command does not take.
 */
export function checkOptionsFor(command: string, options: Readonly<Record<string, unknown>>): void {
  const own = COMMAND_OPTIONS[command] ?? [];
  for (const name of Object.keys(options)) {
    if (!COMMON.includes(name) && !own.includes(name)) {
      const takers = Object.entries(COMMAND_OPTIONS)
        .filter(([, names]) => names.includes(name))
        .map(([c]) => c);
      throw new UsageError(
        `${command} does not take --${name}${
          takers.length === 0 ? "" : ` (only ${takers.join(", ")} ${verb(takers.length)})`
        }`,
      );
    }
  }
}

/**
 * The candidate nearest to `word` (fewest single-character edits, a swap of two neighbours
 * counting as one), when it is near enough to be a typo: at most 1 edit for a word of up to 4
 * characters, 2 for a longer one. `undefined` when none is.
 */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  const most = word.length <= 4 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = most + 1;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best;
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

/** The commands, for suggestions. */
export function commandNames(): string[] {
  return [...Object.keys(COMMAND_OPTIONS).filter((c) => !c.includes(" ")), "bucket", "help"];
}

/** Whether `command` is a command this CLI knows. */
export function isCommand(command: string): boolean {
  return Object.hasOwn(COMMAND_OPTIONS, command);
}

function verb(n: number): string {
  return n === 1 ? "does" : "do";
}
