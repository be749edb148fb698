// Opening the store a command works on, from the command line or a --config file. Only `write`
// and `import` may create a file store's directory; `--read-only` never creates or writes
// anything. Backend-specific scanning lives in backends/; this file only picks the scanner.

import { statSync } from "node:fs";
import process from "node:process";
import type { NatsConnection } from "@nats-io/nats-core";
import { auditLog, ConfigError, openStore, type Store, type StoreConfig } from "../mod.ts";
import { type TextOptions, UsageError } from "./_args.ts";
import { connectNats, natsTarget } from "./_nats.ts";
import { InputError, readUtf8File } from "./_input.ts";

/** The file store the CLI opens when nothing else is chosen. */
const DEFAULT_DIR = "./.agentmem";

/** The option values `open` reads. */
export interface OpenOptions
  extends TextOptions<"dir" | "servers" | "bucket" | "prefix" | "creds" | "config"> {
  readonly readOnly: boolean;
  /** `--no-history`: open the store with option `history: false`. */
  readonly noHistory?: boolean | undefined;
  /** Whether the command may create a missing file-store directory. */
  readonly mayCreate: boolean;
  /** Whether a missing file-store directory counts as an empty store (`import --dry-run`). */
  readonly missingIsEmpty?: boolean | undefined;
}

/** An open store and what the CLI knows about where it lives. */
export interface Opened {
  /**
   * The store; `undefined` when the file store's directory does not exist yet and the command
   * treats that as an empty store (a dry run of `import`).
   */
  readonly store: Store | undefined;
  /** The jetstream key prefix in use, `undefined` for other backends. */
  readonly prefix?: string | undefined;
  /** The jetstream bucket, `undefined` for other backends. */
  readonly bucket?: string | undefined;
  /**
   * The file store's directory as the operator named it (`--dir`, the config file, or the
   * default); `undefined` for other backends. The store itself reports no location for it.
   */
  readonly dir?: string | undefined;
  /** The file store's `history` option as configured (`undefined`: not given, the default). */
  readonly history?: unknown;
  /**
   * The other jetstream prefixes of the bucket under which `key` holds a memory or has history
   * (`""` for the bucket's flat keyspace), for a command that found nothing under its own;
   * absent for other backends.
   */
  readonly elsewhere?: ((key: string) => Promise<string[]>) | undefined;
  /** Closes the CLI's own NATS connection, if any. */
  close(): Promise<void>;
}

/** An opened store that exists. */
export interface OpenedStore extends Opened {
  readonly store: Store;
}

/** `opened` with its store, for the commands that never open a missing directory. */
export function existing(opened: Opened): OpenedStore {
  if (opened.store === undefined) throw new Error("the memory directory does not exist");
  return opened as OpenedStore;
}

/** The store configuration the command line describes, and the NATS connection settings. */
export async function storeConfig(o: OpenOptions): Promise<StoreConfig> {
  if (o.config !== undefined) {
    for (const [name, value] of [["dir", o.dir], ["bucket", o.bucket], ["prefix", o.prefix]]) {
      if (value !== undefined) throw new UsageError(`--config cannot be combined with --${name}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readUtf8File(o.config, "the file given by --config"));
    } catch (e) {
      throw new UsageError(
        e instanceof InputError ? e.message : "the --config file is not valid JSON",
      );
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      const what = parsed === null ? "null" : Array.isArray(parsed) ? "an array" : typeof parsed;
      throw new UsageError(`the --config file must hold a JSON object, not ${what}`);
    }
    let config = parsed as StoreConfig;
    const backend = config.backend ?? "file";
    if (backend !== "jetstream" && (o.servers !== undefined || o.creds !== undefined)) {
      throw new UsageError("--servers and --creds need a jetstream --config");
    }
    if (o.noHistory) config = { ...config, options: { ...config.options, history: false } };
    return o.readOnly ? { ...config, readOnly: true } : config;
  }
  const history = o.noHistory ? { history: false } : {};
  if (o.servers !== undefined) {
    if (o.dir !== undefined) throw new UsageError("choose --dir or --servers, not both");
    return {
      backend: "jetstream",
      options: { bucket: o.bucket ?? "agentmem", prefix: o.prefix ?? "", ...history },
      readOnly: o.readOnly,
    };
  }
  if (o.bucket !== undefined || o.prefix !== undefined || o.creds !== undefined) {
    throw new UsageError("--bucket, --prefix and --creds need --servers");
  }
  return {
    backend: "file",
    options: { dir: o.dir ?? DEFAULT_DIR, ...history },
    readOnly: o.readOnly,
  };
}

/** Opens the store the command line describes. */
export async function open(o: OpenOptions): Promise<Opened> {
  const config = await storeConfig(o);
  const backend = config.backend ?? "file";
  const options = (config.options ?? {}) as Record<string, unknown>;
  if (backend === "file") return await openFile(config, options, o);
  if (backend !== "jetstream") {
    const store = await openStore(config);
    return { store, close: () => Promise.resolve() };
  }
  const nc = await connectNats(natsTarget(o.servers, o.creds, (n) => process.env[n]));
  try {
    const store = await openStore(config, { nc });
    const bucket = String(options.bucket);
    const prefix = typeof options.prefix === "string" ? options.prefix : "";
    const elsewhere = (key: string) => prefixesOf(key, { nc, config, prefix });
    return { store, bucket, prefix, elsewhere, close: () => nc.close().catch(() => {}) };
  } catch (e) {
    await nc.close().catch(() => {});
    throw e;
  }
}

/** Connects to NATS for a command that needs no store (`bucket init`). */
export async function openNats(o: OpenOptions): Promise<NatsConnection> {
  if (o.servers === undefined) throw new UsageError("bucket init needs --servers");
  return await connectNats(natsTarget(o.servers, o.creds, (n) => process.env[n]));
}

async function openFile(
  config: StoreConfig,
  options: Record<string, unknown>,
  o: OpenOptions,
): Promise<Opened> {
  const dir = options.dir;
  if (typeof dir === "string" && dir !== "" && (o.readOnly || !o.mayCreate)) {
    let st;
    try {
      st = statSync(dir, { throwIfNoEntry: false });
    } catch {
      // A path through a file (ENOTDIR), a loop, a permission: the message never repeats the path.
      throw new ConfigError(
        `Cannot open the memory directory given by ${
          o.config === undefined ? "--dir" : "--config"
        }: it cannot be reached`,
      );
    }
    if (st === undefined && o.missingIsEmpty === true) {
      return { store: undefined, close: () => Promise.resolve() };
    }
    if (st === undefined) {
      // Nothing chose a store: say which one the CLI looked for, and how to choose another.
      const which = o.config !== undefined
        ? "given by --config"
        : o.dir !== undefined
        ? "given by --dir"
        : `${DEFAULT_DIR} (the default: no --dir, --servers or --config was given)`;
      throw new ConfigError(
        `Cannot open the memory directory ${which}: it does not exist${
          o.readOnly ? "" : " (only write and import create it)"
        }`,
      );
    }
  }
  // Read-only (the config says so): the backend creates no directory and sweeps no temp file.
  return {
    store: await openStore(config),
    ...(typeof dir === "string" ? { dir } : {}),
    history: options.history,
    close: () => Promise.resolve(),
  };
}

// The prefixes other than `at.prefix` under which `key` lives in the bucket: read through a
// read-only handle on the whole bucket (prefix ""), from its listing and, for a deleted key,
// its history.
async function prefixesOf(
  key: string,
  at: { nc: NatsConnection; config: StoreConfig; prefix: string },
): Promise<string[]> {
  const options: Record<string, unknown> = {
    ...(at.config.options as Record<string, unknown>),
    prefix: "",
  };
  const whole = await openStore({ ...at.config, options, readOnly: true }, { nc: at.nc });
  const found = new Set<string>();
  const note = (name: string) => {
    const p = name === key ? "" : name.endsWith(`.${key}`) ? name.slice(0, -key.length - 1) : null;
    if (p !== null && !p.includes(".") && p !== at.prefix) found.add(p);
  };
  for (const { key: name } of await whole.list()) note(name);
  if (found.size === 0 && options.history !== false) {
    for (const v of await auditLog(whole)) note(v.key);
  }
  return [...found].sort();
}
