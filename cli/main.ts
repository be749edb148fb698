/**
 * The operator CLI's entry function: parses the command line, opens the store and runs one
 * command. `cli.ts` at the package root runs it.
 *
 * @module
 */

import { MemoryError } from "../mod.ts";
import {
  checkOptionsFor,
  commandNames,
  isCommand,
  nearest,
  parseArgs,
  UsageError,
} from "./_args.ts";
import { bucketInit, bucketSettings } from "./_bucket.ts";
import { check, exportDump } from "./_check.ts";
import * as commands from "./_commands.ts";
import {
  historyCommand,
  logCommand,
  restoreCommand,
  revertCommand,
  showCommand,
} from "./_history.ts";
import { importDump } from "./_import.ts";
import { failureKind, InputError } from "./_input.ts";
import { existing, open, openNats, type OpenOptions } from "./_open.ts";
import { serveCommand } from "./_serve.ts";
import { err, errJson, out, quoted } from "./_output.ts";
import { USAGE, VERSION } from "./_usage.ts";

/** Commands that may create a missing file-store directory. */
const CREATING = new Set(["write", "import"]);

/**
 * Runs the CLI with `args` and resolves the exit status; output goes to stdout and stderr.
 *
 * @param args The command-line arguments, without the program name.
 * @returns 0 on success, 1 when the operation failed or found a problem, 2 on a usage error.
 */
export async function main(args: string[]): Promise<number> {
  let json = args.includes("--json");
  try {
    const { options, positionals } = parseArgs(args);
    json = options.json === true;
    if (options.version === true) {
      out(`agentmem ${VERSION}`);
      return 0;
    }
    if (options.help === true) {
      out(USAGE);
      return 0;
    }
    let [command, ...rest] = positionals;
    if (command === undefined) throw new UsageError("no command given");
    if (command === "help") {
      out(USAGE);
      return 0;
    }
    if (command === "bucket") {
      const sub = rest.shift();
      if (sub !== "init") {
        throw new UsageError(
          sub === undefined
            ? "bucket needs a subcommand: init"
            : `unknown bucket subcommand ${quoted(sub)}${
              nearest(sub, ["init"]) === undefined ? "" : ' (did you mean "bucket init"?)'
            }`,
        );
      }
      command = "bucket init";
    }
    if (!isCommand(command)) {
      const near = nearest(command, commandNames());
      throw new UsageError(
        `unknown command ${quoted(command)}${
          near === undefined ? "" : ` (did you mean ${quoted(near)}?)`
        }`,
      );
    }
    checkOptionsFor(command, options);
    const str = (name: string) => options[name] as string | undefined;
    const flag = (name: string) => options[name] === true;
    if (flag("raw") && json) throw new UsageError("choose --raw or --json, not both");
    const readOnly = flag("read-only");
    const dryRun = flag("dry-run");

    const keyArg = () => {
      if (rest.length !== 1) throw new UsageError(`${command} takes exactly one key`);
      return rest[0] as string;
    };
    const noArgs = () => {
      if (rest.length !== 0) throw new UsageError(`${command} takes no arguments`);
    };
    // Arguments are checked before anything is opened, so a usage error never touches a store.
    let key: string | undefined;
    let revision: string | undefined;
    if (["read", "write", "delete", "history"].includes(command)) key = keyArg();
    else if (command === "show" || command === "restore") {
      if (rest.length !== 2) throw new UsageError(`${command} takes a key and a revision`);
      [key, revision] = rest as [string, string];
    } else if (command === "import") {
      if (rest.length > 1) throw new UsageError("import takes at most one file");
    } else noArgs();
    if (command === "write") {
      if (str("description") === undefined) throw new UsageError("write needs --description");
      if (str("content") !== undefined && str("file") !== undefined) {
        throw new UsageError("give the body by --content or --file, not both");
      }
    }

    const openOptions: OpenOptions = {
      dir: str("dir"),
      servers: str("servers"),
      bucket: str("bucket"),
      prefix: str("prefix"),
      creds: str("creds"),
      config: str("config"),
      readOnly,
      mayCreate: CREATING.has(command) && !dryRun,
      missingIsEmpty: command === "import" && dryRun,
    };

    if (command === "bucket init") {
      if (openOptions.prefix !== undefined) {
        throw new UsageError("bucket init does not take --prefix");
      }
      const bucketOptions = {
        bucket: str("bucket"),
        replicas: str("replicas"),
        storage: str("storage"),
        maxValueSize: str("max-value-size"),
        dryRun,
        json,
      };
      const settings = bucketSettings(bucketOptions);
      if (dryRun) return await bucketInit(undefined, settings, bucketOptions);
      if (readOnly) throw new UsageError("bucket init creates a bucket; it cannot be --read-only");
      const nc = await openNats(openOptions);
      try {
        return await bucketInit(nc, settings, bucketOptions);
      } finally {
        await nc.close().catch(() => {});
      }
    }
    if ((command === "restore" || (command === "revert" && !dryRun)) && readOnly) {
      throw new UsageError(`${command} writes; it cannot be --read-only`);
    }
    if (command === "import" && readOnly && !dryRun) {
      throw new UsageError("import writes; with --read-only only --dry-run is allowed");
    }

    if (command === "serve") {
      return await serveCommand(openOptions, {
        port: str("port"),
        host: str("host"),
        write: flag("write"),
        anchor: str("anchor"),
      });
    }
    if (command === "import") {
      return await importDump(() => open(openOptions), rest[0], {
        json,
        overwrite: flag("overwrite"),
        dryRun,
      });
    }
    const opened = existing(await open(openOptions));
    try {
      const o: commands.CommandOptions = {
        json,
        raw: flag("raw"),
        description: str("description"),
        content: str("content"),
        file: str("file"),
        overwrite: flag("overwrite"),
      };
      const h = {
        json,
        raw: flag("raw"),
        dryRun,
        key: str("key"),
        run: str("run"),
        actor: str("actor"),
        since: str("since"),
        until: str("until"),
        tainted: flag("tainted"),
        limit: str("limit"),
      };
      switch (command) {
        case "info":
          return await commands.info(opened, o);
        case "list":
          return await commands.list(opened, o);
        case "read":
          return await commands.read(opened.store, key as string, o);
        case "write":
          return await commands.write(opened.store, key as string, o);
        case "delete":
          return await commands.remove(opened.store, key as string, o);
        case "check":
          return await check(opened, json);
        case "history":
          return await historyCommand(opened.store, key as string, h);
        case "log":
          return await logCommand(opened.store, h);
        case "show":
          return await showCommand(opened.store, key as string, revision as string, h);
        case "restore":
          return await restoreCommand(opened.store, key as string, revision as string, h);
        case "revert":
          return await revertCommand(opened.store, h);
        default:
          return await exportDump(opened, json);
      }
    } finally {
      await opened.close();
    }
  } catch (e) {
    return report(e, json);
  }
}

function report(e: unknown, json: boolean): number {
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
  const [code, message] = e instanceof MemoryError
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
  if (json) errJson({ error: code, message });
  else err(message);
  return 1;
}
