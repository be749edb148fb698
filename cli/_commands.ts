// The everyday commands: info, list, read, write, delete.

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

const ENCODER = new TextEncoder();

/** The option values these commands read. */
export interface CommandOptions {
  readonly json: boolean;
  readonly raw: boolean;
  readonly description?: string | undefined;
  readonly content?: string | undefined;
  readonly file?: string | undefined;
  readonly overwrite: boolean;
}

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

function hiddenLine(hidden: number): string {
  return `(${plural(hidden, "more entry is", "more entries are")} in the store but not listed: ` +
    `damaged, or ${hidden === 1 ? "a name that is" : "names that are"} not a legal key; run ` +
    `"agentmem check" to see ${hidden === 1 ? "it" : "them"})`;
}

// Whether the file store keeps history, and what it keeps: what its options asked for (the
// library's default when they say nothing), confirmed by asking the store.
async function fileHistory(
  opened: Opened,
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
      `younger than ${kept.days} days; agentmem history <key> shows them)`,
  };
}

/** `info`. */
export async function info(opened: Opened, o: CommandOptions): Promise<number> {
  const { backend, location } = opened.store.info();
  const prefix = opened.prefix === undefined ? {} : { prefix: opened.prefix };
  if (opened.dir === undefined) {
    if (o.json) out(safeJson({ backend, location, ...prefix }));
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
  const history = await fileHistory(opened);
  if (o.json) {
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
    out(`entries: ${listed.length}${hidden === 0 ? "" : ` listed ${hiddenLine(hidden)}`}`);
    out(`history: ${history.text}`);
  }
  return 0;
}

/** `list`: every readable memory, and how many entries it left out. */
export async function list(opened: Opened, o: CommandOptions): Promise<number> {
  const items = await opened.store.list();
  const hidden = await hiddenCount(opened, items);
  const { backend, location } = opened.store.info();
  if (o.json) {
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
  if (hidden > 0) out(hiddenLine(hidden));
  return 0;
}

/** `read <key>`. */
export async function read(store: Store, key: string, o: CommandOptions): Promise<number> {
  const entry = await store.read(key);
  if (o.raw) outBytes(ENCODER.encode(entry.content));
  else if (o.json) out(safeJson({ key, ...entry }));
  else {
    const body = showBody(entry.content);
    outBytes(
      ENCODER.encode(
        `description: ${show(entry.description)}\n\n${body}${body.endsWith("\n") ? "" : "\n"}`,
      ),
    );
  }
  return 0;
}

/** `write <key>`. */
export async function write(store: Store, key: string, o: CommandOptions): Promise<number> {
  if (o.description === undefined) throw new UsageError("write needs --description");
  if (o.content !== undefined && o.file !== undefined) {
    throw new UsageError("give the body by --content or --file, not both");
  }
  const content = o.content ??
    (o.file !== undefined
      ? decodeStrict(
        await readBytes(o.file, "the file given by --file"),
        "the file given by --file",
      )
      : decodeStrict(await readStdinBytes(), "standard input"));
  const done = await writeOne(store, key, o.description, content, o.overwrite, "cli");
  out(o.json ? safeJson({ key, written: done }) : `${done} ${key}`);
  return 0;
}

/** `delete <key>`: exit 1 when there was nothing to delete. */
export async function remove(store: Store, key: string, o: CommandOptions): Promise<number> {
  const existed = await store.delete(key, { via: "cli", scope: new Scope({ actor: "operator" }) });
  out(o.json ? safeJson({ key, existed }) : existed ? `deleted ${key}` : `${key} did not exist`);
  return existed ? 0 : 1;
}

/**
 * Creates, or with `overwrite` replaces, reading first so a store that enforces read-before-update
 * accepts the replacement. A damaged entry (which cannot be read) is deleted, then created anew.
 *
 * @returns Whether the key was `"created"` or `"replaced"`.
 */
export async function writeOne(
  store: Store,
  key: string,
  description: string,
  content: string,
  overwrite: boolean,
  via: "cli" | "import",
): Promise<"created" | "replaced"> {
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
