// The everyday commands: info, list, read, write, delete (their table entries and handlers).

import {
  auditLog,
  auditStore,
  ConfigError,
  CorruptError,
  DEFAULT_RETENTION,
  type HistoryRetention,
  type Item,
  MemoryError,
  NotFoundError,
  Scope,
  type Store,
} from "../mod.ts";
import { UsageError } from "./_args.ts";
import { decodeStrict, readBytes, readStdinBytes } from "./_input.ts";
import type { OpenedStore as Opened } from "./_open.ts";
import { out, outBytes, plural, quoted, safeJson, show, showBody } from "./_output.ts";
import type { Command, Context } from "./_spec.ts";

const ENCODER = new TextEncoder();

/** A line saying which bucket and prefix a jetstream store uses; `undefined` for other backends. */
export function whereLine(opened: Opened): string | undefined {
  if (opened.prefix === undefined) return undefined;
  return `bucket ${quoted(opened.bucket ?? "")}, ${prefixText(opened.prefix)}`;
}

function prefixText(prefix: string): string {
  return prefix === ""
    ? `prefix "": the whole bucket (the library's default prefix is the run's identity, so an agent's key k shows here as <identity>.k)`
    : `prefix ${quoted(prefix)}: keys are stored as ${prefix}.<key>`;
}

/**
 * How many entries the keyspace holds that `list()` does not show (a damaged header, a name that
 * is no legal key, something that is not a file), which `check` names one by one.
 */
async function hiddenCount(opened: Opened, listed: readonly Item[]): Promise<number> {
  const keys = new Set(listed.map((i) => i.key));
  const audit = await auditStore(opened.store);
  return audit.entries.filter((e) => e.key === undefined || !keys.has(e.key)).length;
}

function hiddenLine(hidden: number, ctx: Context): string {
  return `(${plural(hidden, "more entry is", "more entries are")} in the store but not listed: ` +
    `damaged, or ${hidden === 1 ? "a name that is" : "names that are"} not a legal key; run ` +
    `"${ctx.again("check")}" to see ${hidden === 1 ? "it" : "them"})`;
}

// Whether the file store keeps history, and what it keeps: what its options asked for (the
// library's default when they say nothing), confirmed by asking the store.
async function fileHistory(
  opened: Opened,
  ctx: Context,
): Promise<{ json: HistoryRetention | false; text: string }> {
  const off = { json: false as const, text: "off (the store keeps no versions)" };
  const option = opened.history;
  if (option === false) return off;
  try {
    await auditLog(opened.store, { limit: 1 });
  } catch (e) {
    if (e instanceof ConfigError) return off;
    throw e;
  }
  const asked = option !== null && typeof option === "object"
    ? option as Partial<HistoryRetention>
    : {};
  const kept = { ...DEFAULT_RETENTION, ...asked };
  return {
    json: kept,
    text: `on (at least the last ${kept.versions} versions of every key, and every version ` +
      `younger than ${kept.days} days; ${ctx.again("history <key>")} shows them)`,
  };
}

export const infoCommand: Command = {
  name: "info",
  summary: "the backend, where the store is, how many memories it holds and what history keeps",
  reach: "store",
  examples: ["agentmem info --dir ./.agentmem"],
  alias: ["status", "stat"],
  run: async (ctx) => info(await ctx.open(), ctx),
};

async function info(opened: Opened, ctx: Context): Promise<number> {
  const { backend, location } = opened.store.info();
  const prefix = opened.prefix === undefined ? {} : { prefix: opened.prefix };
  if (opened.dir === undefined) {
    if (ctx.json) out(safeJson({ backend, location, ...prefix }));
    else {
      out(`backend: ${backend}\nlocation: ${location === "" ? "(none)" : show(location)}`);
      if (opened.prefix !== undefined) out(prefixText(opened.prefix));
    }
    return 0;
  }
  // A file store reports no location (its info().location is "", so that no host path reaches a
  // span or a model): the CLI shows the directory the operator named instead.
  const listed = await opened.store.list();
  const hidden = await hiddenCount(opened, listed);
  const history = await fileHistory(opened, ctx);
  if (ctx.json) {
    out(safeJson({
      backend,
      location,
      directory: opened.dir,
      entries: listed.length,
      hidden,
      history: history.json,
    }));
  } else {
    out(`backend: ${backend}`);
    out(`directory: ${show(opened.dir)}`);
    out(`entries: ${listed.length}${hidden === 0 ? "" : ` listed ${hiddenLine(hidden, ctx)}`}`);
    out(`history: ${history.text}`);
  }
  return 0;
}

export const listCommand: Command = {
  name: "list",
  summary: "every readable key and its description",
  reach: "store",
  examples: ["agentmem list --dir ./.agentmem"],
  alias: ["ls", "keys"],
  run: async (ctx) => list(await ctx.open(), ctx),
};

async function list(opened: Opened, ctx: Context): Promise<number> {
  const items = await opened.store.list();
  const hidden = await hiddenCount(opened, items);
  const { backend, location } = opened.store.info();
  if (ctx.json) {
    const prefix = opened.prefix === undefined ? {} : { prefix: opened.prefix };
    out(safeJson({
      backend,
      location,
      ...prefix,
      memories: items,
      ...(hidden === 0 ? {} : { hidden }),
    }));
    return 0;
  }
  const where = whereLine(opened);
  if (where !== undefined) out(where);
  if (items.length === 0) out("(no memories)");
  for (const { key, description } of items) out(`${key}\t${show(description)}`);
  if (hidden > 0) out(hiddenLine(hidden, ctx));
  return 0;
}

/** `--raw`, as `read` and `show` take it. */
export const RAW = {
  raw: { kind: "boolean", help: "print the body alone, byte for byte (for piping)" },
} as const;

/** Refuses `--raw` with `--json`. */
export function checkRaw(ctx: Context): void {
  if (ctx.flag("raw") && ctx.json) throw new UsageError("choose --raw or --json, not both");
}

export const readCommand: Command = {
  name: "read",
  summary: "a memory's description and body (--raw: the body alone, byte for byte)",
  args: [{ name: "key" }],
  options: RAW,
  reach: "store",
  examples: ["agentmem read user.name --dir ./.agentmem"],
  alias: ["cat", "get", "view"],
  run: async (ctx) => {
    checkRaw(ctx);
    const { store } = await ctx.open();
    const key = ctx.args[0]!;
    const entry = await store.read(key);
    if (ctx.flag("raw")) outBytes(ENCODER.encode(entry.content));
    else if (ctx.json) out(safeJson({ key, ...entry }));
    else {
      const body = showBody(entry.content);
      outBytes(
        ENCODER.encode(
          `description: ${show(entry.description)}\n\n${body}${body.endsWith("\n") ? "" : "\n"}`,
        ),
      );
    }
    return 0;
  },
};

export const writeCommand: Command = {
  name: "write",
  summary:
    "create a memory (--overwrite replaces one); the body comes from --content, --file, or standard input",
  about:
    'The body is UTF-8 (invalid UTF-8 is refused). The write is recorded in history as made by the operator through the CLI (via "cli").',
  args: [{ name: "key" }],
  options: {
    description: {
      kind: "string",
      value: "<text>",
      help: "the one-line description",
      required: true,
    },
    content: { kind: "string", value: "<text>", help: "the body" },
    file: { kind: "string", value: "<path>", help: "read the body from this file" },
    overwrite: { kind: "boolean", help: "replace the memory if the key holds one" },
  },
  reach: "store",
  creates: true,
  examples: [
    'agentmem write user.name --description "The user\'s name" --content Ada --dir ./.agentmem',
  ],
  alias: ["put", "set", "create", "add", "new", "edit"],
  run: async (ctx) => {
    const [content, file] = [ctx.str("content"), ctx.str("file")];
    if (content !== undefined && file !== undefined) {
      throw new UsageError("give the body by --content or --file, not both");
    }
    const body = content ??
      (file !== undefined
        ? decodeStrict(
          await readBytes(file, "the file given by --file"),
          "the file given by --file",
        )
        : decodeStrict(await readStdinBytes(), "standard input"));
    const { store } = await ctx.open();
    const key = ctx.args[0]!;
    const done = await writeOne(store, {
      key,
      description: ctx.str("description")!,
      content: body,
      overwrite: ctx.flag("overwrite"),
      via: "cli",
    });
    out(ctx.json ? safeJson({ key, written: done }) : `${done} ${key}`);
    return 0;
  },
};

export const deleteCommand: Command = {
  name: "delete",
  summary: "delete a memory (exit 1 when there was nothing to delete)",
  args: [{ name: "key" }],
  reach: "store",
  examples: ["agentmem delete user.name --dir ./.agentmem"],
  alias: ["rm", "remove", "del", "forget"],
  run: async (ctx) => {
    const { store } = await ctx.open();
    const key = ctx.args[0]!;
    const existed = await store.delete(key, {
      via: "cli",
      scope: new Scope({ actor: "operator" }),
    });
    out(
      ctx.json ? safeJson({ key, existed }) : existed ? `deleted ${key}` : `${key} did not exist`,
    );
    return existed ? 0 : 1;
  },
};

/** One write of `writeOne`. */
export interface OneWrite {
  readonly key: string;
  readonly description: string;
  readonly content: string;
  /** Replace what the key holds (else a key that holds a memory is an `ExistsError`). */
  readonly overwrite: boolean;
  readonly via: "cli" | "import";
}

/**
 * Creates, or with `overwrite` replaces, reading first so a store that enforces read-before-update
 * accepts the replacement. A damaged entry (which cannot be read) is deleted, then created anew.
 *
 * @returns Whether the key was `"created"` or `"replaced"`.
 */
export async function writeOne(store: Store, w: OneWrite): Promise<"created" | "replaced"> {
  const { key, description, content, overwrite, via } = w;
  const scope = new Scope({ actor: "operator" });
  const opts = { scope, via };
  if (!overwrite) {
    await store.create(key, description, content, opts);
    return "created";
  }
  try {
    await store.read(key, { scope });
  } catch (e) {
    if (e instanceof NotFoundError) {
      await store.create(key, description, content, opts);
      return "created";
    }
    if (!(e instanceof CorruptError)) throw e;
    await store.delete(key, opts);
    try {
      await store.create(key, description, content, opts);
    } catch (e) {
      if (!(e instanceof MemoryError)) throw e;
      throw new MemoryError(
        e.code,
        `${e.message}; the damaged entry under this key was deleted before the failure`,
        { key, cause: e },
      );
    }
    return "replaced";
  }
  await store.update(key, description, content, opts);
  return "replaced";
}
