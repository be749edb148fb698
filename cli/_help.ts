// The CLI's help, rendered from the command table: the overview (`agentmem --help`) and each
// command's usage, options and examples (`agentmem <command> --help`).

import meta from "../deno.json" with { type: "json" };
import {
  type Command,
  GLOBAL_OPTIONS,
  NATS_OPTIONS,
  type OptionSpec,
  STORE_OPTIONS,
} from "./_spec.ts";

/** The package version, from deno.json. */
export const VERSION: string = meta.version;

const WIDTH = 100;
const COLUMN = 24;

const TRAILER =
  `Environment (jetstream): NATS_USER and NATS_PASSWORD, or NATS_TOKEN, log in when neither
--creds nor a URL's user:password@ is given. Credentials are never printed.

Human output shows control characters, bidirectional controls and invisible format characters
in stored text as \\uXXXX escapes; --json and --raw give the exact text.

Exit status: 0 on success, 1 when the operation failed or found a problem, 2 on a usage error.`;

/** `agentmem --help`: every command in a line, the shared options, and where to read more. */
export function overview(commands: readonly Command[]): string {
  return [
    `agentmem ${VERSION}: the operator CLI for agentmem memory stores`,
    "",
    "Usage: agentmem <command> [arguments] [options]",
    "       agentmem <command> --help    that command's usage, options and an example",
    "",
    "Commands:",
    ...commands.flatMap((c) => row(usageOf(c), c.summary)),
    "",
    "Choosing the store (the file backend in ./.agentmem unless told otherwise):",
    ...optionRows(STORE_OPTIONS),
    "",
    "Other options:",
    ...optionRows(GLOBAL_OPTIONS),
    "",
    TRAILER,
  ].join("\n");
}

/** `agentmem <command> --help`. */
export function commandHelp(c: Command): string {
  const own = c.options ?? {};
  const shared = c.reach === "store" ? STORE_OPTIONS : c.reach === "nats" ? NATS_OPTIONS : {};
  return [
    `agentmem ${c.name}: ${c.summary}`,
    "",
    `Usage: agentmem ${usageOf(c)}${
      Object.keys(own).length + Object.keys(shared).length > 0 ? " [options]" : ""
    }`,
    ...(c.about === undefined ? [] : ["", ...wrap(c.about, 0)]),
    ...(Object.keys(own).length === 0 ? [] : ["", "Options:", ...optionRows(own)]),
    ...(c.reach === "none" ? [] : [
      "",
      c.reach === "store"
        ? "Choosing the store (the file backend in ./.agentmem unless told otherwise):"
        : "Connecting to NATS:",
      ...optionRows(shared),
    ]),
    "",
    "Other options:",
    ...optionRows(GLOBAL_OPTIONS),
    "",
    c.examples.length === 1 ? "Example:" : "Examples:",
    ...c.examples.map((e) => `  ${e}`),
  ].join("\n");
}

/** `read <key>`, `import [file]`. */
export function usageOf(c: Command): string {
  const args = (c.args ?? []).map((a) => (a.optional ? `[${a.name}]` : `<${a.name}>`));
  const required = Object.entries(c.options ?? {})
    .filter(([, o]) => o.required)
    .map(([name, o]) => `--${name} ${o.value ?? ""}`.trim());
  return [c.name, ...args, ...required].join(" ");
}

function optionRows(options: Readonly<Record<string, OptionSpec>>): string[] {
  return Object.entries(options).flatMap(([name, o]) =>
    row(
      `${name === "help" ? "-h, " : ""}--${name}${o.value === undefined ? "" : ` ${o.value}`}`,
      `${o.help}${o.required ? " (required)" : ""}`,
    )
  );
}

// `left` in a column, `text` wrapped beside it.
function row(left: string, text: string): string[] {
  const head = `  ${left}`;
  const lines = wrap(text, COLUMN);
  if (head.length < COLUMN - 1) {
    return [head.padEnd(COLUMN) + lines[0]!.trimStart(), ...lines.slice(1)];
  }
  return [head, ...lines];
}

// `text` in lines of at most WIDTH characters, each after `indent` spaces.
function wrap(text: string, indent: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line !== "" && indent + line.length + 1 + word.length > WIDTH) {
      lines.push(" ".repeat(indent) + line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  lines.push(" ".repeat(indent) + line);
  return lines;
}
