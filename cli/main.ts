/**
 * The operator CLI's entry function: finds the command in the table (cli/_table.ts), checks its
 * arguments and options, runs it, and reports a failure in the operator's terms. `cli.ts` at the
 * package root and the npm package's `agentmem` bin run it.
 *
 * @module
 */

import { MemoryError, NotFoundError } from "../mod.ts";
import { nearest, parseArgs, UsageError } from "./_args.ts";
import { Given } from "./_fixes.ts";
import { commandHelp, overview, VERSION } from "./_help.ts";
import { failureKind, InputError } from "./_input.ts";
import { existing, open, type Opened, openNats, type OpenOptions } from "./_open.ts";
import { err, errJson, out, quoted } from "./_output.ts";
import { type Command, type Context, optionsOf, type OptionSpec, STORE_OPTIONS } from "./_spec.ts";
import { COMMANDS } from "./_table.ts";

// Every option any command takes, for parsing before the command is known: one kind per name.
const KNOWN: Readonly<Record<string, OptionSpec>> = (() => {
  const known: Record<string, OptionSpec> = {};
  for (const c of COMMANDS) {
    for (const [name, o] of Object.entries(optionsOf(c))) {
      if (known[name] !== undefined && known[name].kind !== o.kind) {
        throw new Error(`cli/_table.ts: option --${name} is a ${o.kind} in ${c.name}, else not`);
      }
      known[name] = o;
    }
  }
  return known;
})();

/**
 * Runs the CLI with `args` and resolves the exit status; output goes to stdout and stderr.
 *
 * @param args The command-line arguments, without the program name.
 * @returns 0 on success, 1 when the operation failed or found a problem, 2 on a usage error.
 */
export async function main(args: string[]): Promise<number> {
  let json = args.includes("--json");
  let given: Given | undefined;
  const closers: Array<() => Promise<void>> = [];
  try {
    const { options, positionals } = parseArgs(args, {
      known: KNOWN,
      takenBy: (words) => {
        const named = words[0] === "help" ? words.slice(1) : words;
        const command = COMMANDS.find((c) => named.join(" ").startsWith(c.name));
        return command === undefined ? undefined : Object.keys(optionsOf(command));
      },
    });
    json = options.json === true;
    given = new Given(options, COMMANDS);
    if (options.version === true) {
      out(`agentmem ${VERSION}`);
      return 0;
    }
    const helpAsked = options.help === true || positionals[0] === "help";
    const words = positionals[0] === "help" ? positionals.slice(1) : positionals;
    if (words.length === 0) {
      if (!helpAsked) throw new UsageError("no command given");
      out(overview(COMMANDS));
      return 0;
    }
    const { command, rest } = resolve(words);
    if (helpAsked) {
      out(commandHelp(command));
      return 0;
    }
    check(command, { options, rest });
    const str = (name: string) => options[name] as string | undefined;
    const flag = (name: string) => options[name] === true;
    const dryRun = flag("dry-run");
    const openOptions: OpenOptions = {
      dir: str("dir"),
      servers: str("servers"),
      bucket: str("bucket"),
      prefix: str("prefix"),
      creds: str("creds"),
      config: str("config"),
      readOnly: flag("read-only"),
      noHistory: flag("no-history"),
      mayCreate: command.creates === true && !dryRun,
    };
    let last: Opened | undefined;
    const track = async <T extends Opened>(opening: Promise<T>) => {
      const opened = await opening;
      closers.push(() => opened.close());
      last = opened;
      return opened;
    };
    const elsewhere = async (key: string) => {
      const prefixes = await last?.elsewhere?.(key) ?? [];
      if (prefixes.length === 0) return undefined;
      const shown = prefixes.map((p) => quoted(p)).join(", ");
      const args = rest.map((a) => (a === key ? key : a)).join(" ");
      return `it is not under prefix ${quoted(last?.prefix ?? "")} but exists under ${
        prefixes.length === 1 ? "prefix" : "prefixes"
      } ${shown}: ${again.again(`${command.name} ${args} --prefix ${prefixes[0]!}`)}`;
    };
    const again = given;
    const ctx: Context = {
      command,
      args: rest,
      json,
      str,
      flag,
      open: async (overrides) => existing(await track(open({ ...openOptions, ...overrides }))),
      openOrEmpty: () => track(open({ ...openOptions, missingIsEmpty: true })),
      nats: async () => {
        const nc = await openNats(openOptions);
        closers.push(() => nc.close().catch(() => {}));
        return nc;
      },
      again: (w) => again.again(w),
      elsewhere,
    };
    try {
      return await command.run(ctx);
    } catch (e) {
      // A key with nothing here may live under another jetstream prefix: say where.
      if (!(e instanceof NotFoundError) || e.key === undefined) throw e;
      const where = await elsewhere(e.key).catch(() => undefined);
      if (where === undefined) throw e;
      throw new NotFoundError(`${e.message}; ${where}`, {
        key: (e as NotFoundError).key,
        cause: e,
      });
    }
  } catch (e) {
    return report(e, json, given);
  } finally {
    for (const close of closers) await close();
  }
}

// The command `words` name, and the arguments after its name.
function resolve(words: readonly string[]): { command: Command; rest: string[] } {
  const [first, ...after] = words as [string, ...string[]];
  // A command that is also a group (`review`, `review show`): the subcommand when one is named.
  const sub = COMMANDS.find((c) => after[0] !== undefined && c.name === `${first} ${after[0]}`);
  if (sub !== undefined) return { command: sub, rest: after.slice(1) };
  const exact = COMMANDS.find((c) => c.name === first);
  if (exact !== undefined) return { command: exact, rest: after };
  const group = COMMANDS.filter((c) => c.name.startsWith(`${first} `));
  if (group.length > 0) {
    const subs = group.map((c) => c.name.slice(first.length + 1));
    const [sub, ...rest] = after;
    if (sub === undefined) {
      throw new UsageError(`${first} needs a subcommand: ${subs.join(", ")}`);
    }
    const found = group.find((c) => c.name === `${first} ${sub}`);
    if (found !== undefined) return { command: found, rest };
    const meant = suggest(sub, { among: group, names: subs, group: first });
    throw new UsageError(
      `unknown ${first} subcommand ${quoted(sub)}${
        meant === undefined ? "" : ` (did you mean ${quoted(meant)}?)`
      }`,
    );
  }
  const tops = [...new Set(COMMANDS.map((c) => c.name.split(" ")[0]!)), "help"];
  const meant = suggest(first, { among: COMMANDS, names: tops }) ??
    COMMANDS.find((c) => c.name.endsWith(` ${first}`))?.name;
  throw new UsageError(
    `unknown command ${quoted(first)}${
      meant === undefined ? "" : ` (did you mean ${quoted(meant)}?)`
    }`,
  );
}

// The command `word` was meant to be, among commands whose names (the words after `group`, if
// any) are `names`: one whose alias it is, else the nearest name.
function suggest(
  word: string,
  o: { among: readonly Command[]; names: readonly string[]; group?: string },
): string | undefined {
  const aliased = o.among.find((c) => c.alias?.includes(word.toLowerCase()));
  if (aliased !== undefined) return aliased.name;
  const near = nearest(word, o.names);
  return near === undefined ? undefined : o.group === undefined ? near : `${o.group} ${near}`;
}

// What the table says about `command`'s arguments and options, checked before anything is opened.
function check(
  command: Command,
  given: { options: Readonly<Record<string, string | boolean>>; rest: readonly string[] },
): void {
  const { options, rest } = given;
  const takes = optionsOf(command);
  for (const name of Object.keys(options)) {
    if (Object.hasOwn(takes, name)) continue;
    if (Object.hasOwn(STORE_OPTIONS, name)) {
      throw new UsageError(
        `${command.name} does not take --${name}: it opens no store${
          command.reach === "nats" ? ", only a NATS connection (--servers, --creds)" : ""
        }`,
      );
    }
    const takers = COMMANDS.filter((c) => Object.hasOwn(optionsOf(c), name)).map((c) => c.name);
    throw new UsageError(
      `${command.name} does not take --${name}${
        takers.length === 0
          ? ""
          : ` (only ${takers.join(", ")} ${takers.length === 1 ? "does" : "do"})`
      }`,
    );
  }
  const specs = command.args ?? [];
  const needed = specs.filter((a) => !a.optional).length;
  if (rest.length < needed || rest.length > specs.length) {
    throw new UsageError(`${command.name} ${argsRule(specs)}`);
  }
  for (const [name, o] of Object.entries(command.options ?? {})) {
    if (o.required && options[name] === undefined) {
      throw new UsageError(`${command.name} needs --${name}`);
    }
  }
  if (options["read-only"] === true && command.writes !== undefined) {
    if (command.writes === "always") {
      throw new UsageError(`${command.name} writes; it cannot be --read-only`);
    }
    if (options["dry-run"] !== true) {
      throw new UsageError(`${command.name} writes; with --read-only only --dry-run is allowed`);
    }
  }
}

// `takes exactly one key`, `takes a key and a revision`, `takes at most one file`.
function argsRule(specs: Command["args"] & object): string {
  if (specs.length === 0) return "takes no arguments";
  if (specs.length === 1) {
    return `takes ${specs[0]!.optional ? "at most" : "exactly"} one ${specs[0]!.name}`;
  }
  return `takes ${specs.map((a) => `a ${a.name}`).join(" and ")}`;
}

function report(e: unknown, json: boolean, given: Given | undefined): number {
  if (e instanceof UsageError) {
    if (json) errJson({ error: "usage", message: e.message });
    else {
      err(e.message);
      err("run with --help for usage");
    }
    return 2;
  }
  // The reader went away (`agentmem list | head`): nothing more to say, to anyone.
  const kind = failureKind(e);
  if (kind === "EPIPE" || kind === "BrokenPipe") return 1;
  const [code, text] = e instanceof MemoryError
    ? [e.code, e.message]
    : e instanceof InputError
    ? ["input", e.message]
    : [
      "error",
      // The kind only: a raw error's text can hold host paths (node:fs puts them there).
      `Unexpected failure (${
        failureKind(e)
      }); nothing more is shown, since its text can hold host paths`,
    ];
  // A command the message prints runs as printed: with the options that chose this store.
  const message = given === undefined ? text : given.complete(text);
  if (json) errJson({ error: code, message });
  else err(message);
  return 1;
}
