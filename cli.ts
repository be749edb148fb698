/**
 * The operator CLI: inspect, edit, check, export and import a memory store from a shell.
 *
 * ```sh
 * deno run -A jsr:@agentmem/memory/cli list --dir ./.agentmem
 * deno run -A jsr:@agentmem/memory/cli export --servers nats://127.0.0.1:4222 --bucket agentmem > dump.jsonl
 * ```
 *
 * Run it with `--help` for every command and option.
 *
 * @module
 */

import { parseArgs } from "node:util";
import {
  MemoryError,
  NotFoundError,
  openStore,
  Scope,
  type Store,
  type StoreConfig,
  type StoreDeps,
} from "./mod.ts";

const USAGE = `agentmem: the operator CLI for agentmem memory stores

Usage: agentmem <command> [arguments] [options]

Commands:
  info                 the backend and its location
  list                 every key and its description
  read <key>           a memory's description and body
  write <key>          create a memory (--overwrite replaces one); the body comes from
                       --content, --file, or standard input
  delete <key>         delete a memory
  check                open the store and read every entry; exit 1 if any cannot be read
  export               every memory as JSON lines {"key","description","content"} on stdout
  import [file]        create memories from JSON lines (a file, or standard input);
                       --overwrite replaces existing ones, otherwise they are skipped

Choosing the store (the file backend in ./.agentmem unless told otherwise):
  --dir <path>         file backend: the memory directory
  --servers <urls>     jetstream backend: NATS server URLs, comma-separated
  --bucket <name>      jetstream backend: the KV bucket (default "agentmem")
  --prefix <prefix>    jetstream backend: the key prefix (default "": the whole bucket)
  --creds <file>       jetstream backend: a NATS credentials file
  --config <file>      a JSON file {"backend", "options", "readOnly"}, as openStore takes

Other options:
  --description <text>  write: the one-line description (required)
  --content <text>      write: the body
  --file <path>         write: read the body from this file
  --overwrite           write, import: replace existing memories
  --read-only           refuse every write (for inspection)
  --json                machine-readable output
  -h, --help            this help

Exit status: 0 on success, 1 when the operation failed, 2 on a usage error.`;

class UsageError extends Error {}

interface Options {
  dir?: string | undefined;
  servers?: string | undefined;
  bucket?: string | undefined;
  prefix?: string | undefined;
  creds?: string | undefined;
  config?: string | undefined;
  description?: string | undefined;
  content?: string | undefined;
  file?: string | undefined;
  overwrite?: boolean | undefined;
  "read-only"?: boolean | undefined;
  json?: boolean | undefined;
  help?: boolean | undefined;
}

/**
 * Runs the CLI with `args` and resolves the exit status; output goes to stdout and stderr.
 *
 * @param args The command-line arguments, without the program name.
 * @returns The exit status: 0 on success, 1 when the operation failed, 2 on a usage error.
 */
export async function main(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        dir: { type: "string" },
        servers: { type: "string" },
        bucket: { type: "string" },
        prefix: { type: "string" },
        creds: { type: "string" },
        config: { type: "string" },
        description: { type: "string" },
        content: { type: "string" },
        file: { type: "string" },
        overwrite: { type: "boolean" },
        "read-only": { type: "boolean" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    return usage(e instanceof Error ? e.message : String(e));
  }
  const opts = parsed.values as Options;
  const [command, ...rest] = parsed.positionals;
  if (opts.help || command === undefined || command === "help") {
    console.log(USAGE);
    return command === undefined && !opts.help ? 2 : 0;
  }
  let connection: { close(): Promise<void> } | undefined;
  try {
    const { store, nc } = await open(opts);
    connection = nc;
    return await run(command, rest, opts, store);
  } catch (e) {
    if (e instanceof UsageError) return usage(e.message);
    if (e instanceof MemoryError) {
      printError(opts, e.message, e.code);
      return 1;
    }
    printError(opts, e instanceof Error ? e.message : String(e), "error");
    return 1;
  } finally {
    await connection?.close().catch(() => {});
  }
}

function usage(message: string): number {
  console.error(`agentmem: ${message}\nRun with --help for usage.`);
  return 2;
}

function printError(opts: Options, message: string, code: string): void {
  if (opts.json) console.error(JSON.stringify({ error: code, message }));
  else console.error(`agentmem: ${message}`);
}

async function open(opts: Options): Promise<{ store: Store; nc?: { close(): Promise<void> } }> {
  const readOnly = opts["read-only"] ?? false;
  let config: StoreConfig;
  if (opts.config !== undefined) {
    if (opts.dir !== undefined || opts.servers !== undefined) {
      throw new UsageError("--config cannot be combined with --dir or --servers");
    }
    let text: string;
    try {
      text = await Deno.readTextFile(opts.config);
    } catch {
      throw new UsageError("cannot read the --config file");
    }
    try {
      config = JSON.parse(text);
    } catch {
      throw new UsageError("the --config file is not valid JSON");
    }
    if (readOnly) config = { ...config, readOnly: true };
  } else if (opts.servers !== undefined) {
    if (opts.dir !== undefined) throw new UsageError("choose --dir or --servers, not both");
    config = {
      backend: "jetstream",
      options: { bucket: opts.bucket ?? "agentmem", prefix: opts.prefix ?? "" },
      readOnly,
    };
  } else {
    if (opts.bucket !== undefined || opts.prefix !== undefined || opts.creds !== undefined) {
      throw new UsageError("--bucket, --prefix and --creds need --servers");
    }
    config = { backend: "file", options: { dir: opts.dir ?? "./.agentmem" }, readOnly };
  }
  if (config.backend !== "jetstream") return { store: await openStore(config) };
  const nc = await connectNats(opts);
  const deps: StoreDeps = { nc };
  try {
    return { store: await openStore(config, deps), nc };
  } catch (e) {
    await nc.close().catch(() => {});
    throw e;
  }
}

async function connectNats(opts: Options) {
  const servers = (opts.servers ?? "nats://127.0.0.1:4222").split(",").map((s) => s.trim());
  const { connect, credsAuthenticator } = await import("@nats-io/transport-node");
  const authenticator = opts.creds === undefined
    ? undefined
    : credsAuthenticator(await Deno.readFile(opts.creds));
  try {
    return await connect({
      servers,
      name: "agentmem-cli",
      ...(authenticator === undefined ? {} : { authenticator }),
      timeout: 5_000,
      maxReconnectAttempts: 2,
    });
  } catch (e) {
    const code = e instanceof Error && "code" in e ? ` (${String(e.code)})` : "";
    throw new MemoryError(
      "unavailable",
      `Cannot connect to the NATS servers given by --servers${code}`,
    );
  }
}

async function run(command: string, args: string[], opts: Options, store: Store): Promise<number> {
  const key = () => {
    if (args.length !== 1) throw new UsageError(`${command} takes exactly one key`);
    return args[0] as string;
  };
  const noArgs = () => {
    if (args.length !== 0) throw new UsageError(`${command} takes no arguments`);
  };
  const out = (value: unknown, text: string) =>
    console.log(opts.json ? JSON.stringify(value) : text);

  switch (command) {
    case "info": {
      noArgs();
      const info = store.info();
      out(info, `backend: ${info.backend}\nlocation: ${info.location || "(none)"}`);
      return 0;
    }
    case "list": {
      noArgs();
      const items = await store.list();
      if (opts.json) console.log(JSON.stringify(items));
      else if (items.length === 0) console.log("(no memories)");
      else for (const { key, description } of items) console.log(`${key}\t${description}`);
      return 0;
    }
    case "read": {
      const k = key();
      const entry = await store.read(k);
      out({ key: k, ...entry }, `description: ${entry.description}\n\n${entry.content}`);
      return 0;
    }
    case "write": {
      const k = key();
      if (opts.description === undefined) throw new UsageError("write needs --description");
      const content = await bodyFrom(opts);
      const replaced = await write(store, k, opts.description, content, opts.overwrite ?? false);
      out(
        { key: k, written: replaced ? "replaced" : "created" },
        `${replaced ? "replaced" : "created"} ${k}`,
      );
      return 0;
    }
    case "delete": {
      const k = key();
      const existed = await store.delete(k);
      out({ key: k, existed }, existed ? `deleted ${k}` : `${k} did not exist`);
      return existed ? 0 : 1;
    }
    case "check": {
      noArgs();
      const items = await store.list();
      const problems: Array<{ key: string; error: string; message: string }> = [];
      for (const { key } of items) {
        try {
          await store.read(key);
        } catch (e) {
          if (!(e instanceof MemoryError)) throw e;
          problems.push({ key, error: e.code, message: e.message });
        }
      }
      const info = store.info();
      if (opts.json) console.log(JSON.stringify({ ...info, entries: items.length, problems }));
      else {
        console.log(`${info.backend}: ${items.length} memories, ${problems.length} unreadable`);
        for (const p of problems) console.log(`  ${p.key}: ${p.message}`);
      }
      return problems.length === 0 ? 0 : 1;
    }
    case "export": {
      noArgs();
      for (const { key } of await store.list()) {
        try {
          const entry = await store.read(key);
          console.log(
            JSON.stringify({ key, description: entry.description, content: entry.content }),
          );
        } catch (e) {
          if (!(e instanceof NotFoundError)) throw e; // deleted while exporting
        }
      }
      return 0;
    }
    case "import": {
      if (args.length > 1) throw new UsageError("import takes at most one file");
      const text = args[0] === undefined ? await readStdin() : await Deno.readTextFile(args[0]);
      return await importLines(store, text, opts);
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

// Creates, or with `overwrite` replaces, reading first so a store that enforces read-before-update
// accepts the replacement. Resolves whether an existing memory was replaced.
async function write(
  store: Store,
  key: string,
  description: string,
  content: string,
  overwrite: boolean,
): Promise<boolean> {
  if (!overwrite) {
    await store.create(key, description, content);
    return false;
  }
  const scope = new Scope();
  try {
    await store.read(key, { scope });
  } catch (e) {
    if (!(e instanceof NotFoundError)) throw e;
    await store.create(key, description, content, { scope });
    return false;
  }
  await store.update(key, description, content, { scope });
  return true;
}

async function importLines(store: Store, text: string, opts: Options): Promise<number> {
  let created = 0, replaced = 0, skipped = 0, failed = 0;
  const lines = text.split("\n");
  for (const [i, line] of lines.entries()) {
    if (line.trim() === "") continue;
    let record: { key?: unknown; description?: unknown; content?: unknown };
    try {
      record = JSON.parse(line);
    } catch {
      console.error(`agentmem: line ${i + 1}: not JSON`);
      failed++;
      continue;
    }
    const { key, description, content } = record ?? {};
    try {
      const wasReplaced = await write(
        store,
        key as string,
        description as string,
        content as string,
        opts.overwrite ?? false,
      );
      if (wasReplaced) replaced++;
      else created++;
    } catch (e) {
      if (!(e instanceof MemoryError)) throw e;
      if (e.code === "exists") skipped++;
      else {
        console.error(`agentmem: line ${i + 1}: ${e.message}`);
        failed++;
      }
    }
  }
  const summary = { created, replaced, skipped, failed };
  if (opts.json) console.log(JSON.stringify(summary));
  else {
    console.log(
      `imported: ${created} created, ${replaced} replaced, ${skipped} skipped (exist), ${failed} failed`,
    );
  }
  return failed === 0 ? 0 : 1;
}

async function bodyFrom(opts: Options): Promise<string> {
  if (opts.content !== undefined && opts.file !== undefined) {
    throw new UsageError("give the body by --content or --file, not both");
  }
  if (opts.content !== undefined) return opts.content;
  if (opts.file !== undefined) return await Deno.readTextFile(opts.file);
  return await readStdin();
}

async function readStdin(): Promise<string> {
  return await new Response(Deno.stdin.readable).text();
}

if (import.meta.main) Deno.exit(await main(Deno.args));
