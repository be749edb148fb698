// What a command is: one entry of the CLI's table (_table.ts), from which parsing, dispatch,
// suggestions and help are all derived, and the context its handler runs with.

import type { NatsConnection } from "@nats-io/nats-core";
import type { OptionSpec } from "./_args.ts";
import type { Opened, OpenedStore } from "./_open.ts";

export type { OptionSpec };

/** A positional argument. */
export interface ArgSpec {
  /** Its name in usage lines and messages: `key`, `revision`, `file`. */
  readonly name: string;
  readonly optional?: boolean;
}

/** Which of the shared options a command takes. */
export type Reach = "store" | "nats" | "none";

/** One command of the CLI. */
export interface Command {
  /** `info`, or a group and its subcommand: `bucket init`. */
  readonly name: string;
  /** One line: what it does (the overview's line and the first line of its help). */
  readonly summary: string;
  /** More of what it does, for `agentmem <command> --help`. */
  readonly about?: string;
  readonly args?: readonly ArgSpec[];
  /** Its own options, besides the shared ones its `reach` brings. */
  readonly options?: Readonly<Record<string, OptionSpec>>;
  /** `store`: it opens a memory store; `nats`: a NATS connection only; `none`: neither. */
  readonly reach: Reach;
  /** It may create a missing file-store directory (never with `--dry-run`). */
  readonly creates?: boolean;
  /**
   * `--read-only` is a usage error for it (`unless-dry-run`: but for a dry run). A command that
   * does not say so leaves the refusal to the read-only store (`read_only`, exit 1).
   */
  readonly writes?: "always" | "unless-dry-run";
  /** Shell lines shown under its help, each one a complete `agentmem ...` command. */
  readonly examples: readonly string[];
  /** Words an operator may try for it (`ls`, `create`), offered as "did you mean". */
  readonly alias?: readonly string[];
  readonly run: (ctx: Context) => Promise<number>;
}

/** What a handler works with. Usage errors it finds before opening anything touch no store. */
export interface Context {
  readonly command: Command;
  /** The positional arguments after the command's name, their count already checked. */
  readonly args: readonly string[];
  /** `--json` was given. */
  readonly json: boolean;
  /** A string option's value. */
  str(name: string): string | undefined;
  /** Whether a boolean option was given. */
  flag(name: string): boolean;
  /**
   * The store the options name; it must exist unless the command `creates` it. `readOnly`
   * overrides `--read-only` (the console opens read-only unless `--write`).
   */
  open(overrides?: { readonly readOnly?: boolean }): Promise<OpenedStore>;
  /** Like `open`, but a missing file-store directory is a store of nothing (`import --dry-run`). */
  openOrEmpty(): Promise<Opened>;
  /** A NATS connection to `--servers` (for a command that opens no store). */
  nats(): Promise<NatsConnection>;
  /**
   * `agentmem <words>` followed by the store options the operator gave this run, ready to paste:
   * what a message prints when it points to another command.
   */
  again(words: string): string;
  /**
   * For a key this run's store has nothing under: a sentence naming the other jetstream prefixes
   * where it lives, with the command to see it there; `undefined` when there are none.
   */
  elsewhere(key: string): Promise<string | undefined>;
}

/** The options that choose the store, taken by every command that opens one. */
export const STORE_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  dir: {
    kind: "string",
    value: "<path>",
    help:
      "file backend: the memory directory (default ./.agentmem). Only write and import create it; the other commands need it to exist",
  },
  servers: {
    kind: "string",
    value: "<urls>",
    help:
      "jetstream backend: NATS server URLs, comma-separated; user:password@ in a URL logs in with them (never printed)",
  },
  bucket: {
    kind: "string",
    value: "<name>",
    help: 'jetstream backend: the KV bucket (default "agentmem")',
  },
  prefix: {
    kind: "string",
    value: "<prefix>",
    help:
      'jetstream backend: the key prefix. The library\'s default prefix is the run\'s identity, so an agent with identity "agent-7" keeps key "user.name" at bucket key "agent-7.user.name". The CLI has no identity: its default is "" (the whole bucket, where that memory shows as "agent-7.user.name"); pass --prefix agent-7 to see it as the agent does',
  },
  creds: { kind: "string", value: "<file>", help: "jetstream backend: a NATS credentials file" },
  config: {
    kind: "string",
    value: "<file>",
    help:
      'a JSON object {"backend", "options", "readOnly"}, as openStore takes (--servers and --creds still choose the NATS connection)',
  },
  "no-history": {
    kind: "boolean",
    help:
      'open the store with history off (option "history": false): for a directory or bucket that keeps no versions, such as a plain NATS KV bucket',
  },
  "read-only": {
    kind: "boolean",
    help: "never create or write anything (a missing directory is an error)",
  },
};

/** The options that choose the NATS connection, for a command that opens no store. */
export const NATS_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  servers: STORE_OPTIONS.servers!,
  creds: STORE_OPTIONS.creds!,
  "read-only": STORE_OPTIONS["read-only"]!,
};

/** Options every command takes. */
export const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  json: { kind: "boolean", help: "machine-readable output (errors as JSON on stderr)" },
  help: { kind: "boolean", help: "a command's usage, options and an example" },
  version: { kind: "boolean", help: "the version" },
};

/** The shared options a command takes, by its reach. */
export function sharedOptions(reach: Reach): Readonly<Record<string, OptionSpec>> {
  const shared = reach === "store" ? STORE_OPTIONS : reach === "nats" ? NATS_OPTIONS : {};
  return { ...shared, ...GLOBAL_OPTIONS };
}

/** Every option `command` takes: its own, then the shared ones. */
export function optionsOf(command: Command): Readonly<Record<string, OptionSpec>> {
  return { ...command.options, ...sharedOptions(command.reach) };
}
