/**
 * The backend registry and `openStore`, which opens a store from configuration.
 *
 * @module
 */

import { ConfigError, MemoryError } from "./errors.ts";
import { type DecodedOptions, decodeOptions, type OptionsSchema } from "./options.ts";
import type { Store } from "./types.ts";
import { instrument, readOnlyStore } from "./build.ts";
import { describeType, errorKind, quote } from "./text.ts";

/**
 * What a backend may need besides its options, supplied by the host: a store to use as is, a
 * NATS connection, the run's identity. Backends take what they need and ignore the rest.
 */
export interface StoreDeps {
  /** A ready store; `openStore` returns it instead of opening one. */
  readonly store?: Store | undefined;
  /** The host's NATS connection, borrowed by the jetstream backend and never closed. */
  readonly nc?: unknown;
  /** The run's identity, the jetstream backend's default key prefix. */
  readonly identity?: string | undefined;
  /** Anything a third-party backend needs. */
  readonly [dependency: string]: unknown;
}

/** What `openStore` tells a backend about how the store will be used. */
export interface OpenContext {
  /**
   * `true` when the store is opened read-only: the backend should not create or write anything
   * (openStore also wraps the store so writes are refused).
   */
  readonly readOnly: boolean;
}

/** A backend: the options it accepts and how to open a store from them. */
export interface BackendDefinition<S extends OptionsSchema = OptionsSchema> {
  /** The options the backend accepts, decoded strictly by `decodeOptions`. */
  readonly options: S;
  /**
   * Opens a store. Options arrive decoded; dependencies arrive as the host gave them; the
   * context says whether the store is read-only.
   */
  open(options: DecodedOptions<S>, deps: StoreDeps, context?: OpenContext): Promise<Store>;
}

/** What `openStore` takes: which backend, its options, and whether the store is read-only. */
export interface StoreConfig {
  /** A registered backend name; when omitted, an injected store or else `"file"`. */
  readonly backend?: string | undefined;
  /** The backend's options block. */
  readonly options?: Readonly<Record<string, unknown>> | undefined;
  /** When `true`, writes and deletes are refused with `ReadOnlyError`. */
  readonly readOnly?: boolean | undefined;
}

const BACKEND_NAME = /^[a-z][a-z0-9_-]{0,63}$/;
const registry = new Map<string, BackendDefinition>();

/**
 * Registers a backend under `name`, so `openStore({ backend: name })` can open it. `file` and
 * `jetstream` are registered by the library.
 *
 * @param name Lower-case letters, digits, `_` and `-`, starting with a letter.
 * @param definition The backend's options schema and opener.
 * @throws {ConfigError} when the name is malformed or already taken.
 */
export function registerBackend<S extends OptionsSchema>(
  name: string,
  definition: BackendDefinition<S>,
): void {
  if (typeof name !== "string" || !BACKEND_NAME.test(name)) {
    throw new ConfigError(
      `Cannot register backend ${
        quote(name)
      }: a name is lower-case letters, digits, "_" and "-", starting with a letter`,
    );
  }
  if (registry.has(name)) {
    throw new ConfigError(`Cannot register backend ${quote(name)}: the name is already registered`);
  }
  const problem = definitionProblem(definition);
  if (problem !== undefined) {
    throw new ConfigError(`Cannot register backend ${quote(name)}: ${problem}`);
  }
  registry.set(name, definition as unknown as BackendDefinition);
}

// Why a definition cannot be registered, or `undefined`. Read once, defensively: a getter that
// throws or a Proxy is a broken definition, not a crash.
function definitionProblem(definition: unknown): string | undefined {
  try {
    if (definition === null || typeof definition !== "object") {
      return `the definition must be an object with "options" and "open", got ${
        describeType(definition)
      }`;
    }
    const { open, options } = definition as Record<string, unknown>;
    if (typeof open !== "function") return `"open" must be a function`;
    if (options === null || typeof options !== "object" || Array.isArray(options)) {
      return `"options" must be an object mapping option names to specs, got ${
        describeType(options)
      }`;
    }
    return schemaProblem(options as Record<string, unknown>, "");
  } catch (e) {
    return `reading the definition failed (${errorKind(e)})`;
  }
}

const TYPES = ["string", "boolean", "number", "object"];

// Why an options schema is not one decodeOptions can use, or `undefined`.
function schemaProblem(schema: Record<string, unknown>, path: string): string | undefined {
  for (const [key, spec] of Object.entries(schema)) {
    const s = spec !== null && typeof spec === "object" ? spec as Record<string, unknown> : {};
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (types.length === 0 || !types.every((t) => TYPES.includes(t as string))) {
      return `option ${
        quote(path + key)
      } needs a spec like { type: "string" }, with type "string", "boolean", "number" or "object" (or a list of them)`;
    }
    if (s.fields !== undefined) {
      if (s.fields === null || typeof s.fields !== "object" || Array.isArray(s.fields)) {
        return `option ${quote(path + key)} has "fields" that are not an options schema`;
      }
      const inner = schemaProblem(s.fields as Record<string, unknown>, `${path}${key}.`);
      if (inner !== undefined) return inner;
    }
  }
  return undefined;
}

/** The names of the registered backends, sorted. */
export function registeredBackends(): string[] {
  return [...registry.keys()].sort();
}

const CONFIG_FIELDS = ["backend", "options", "readOnly"];

/**
 * Opens a store from configuration.
 *
 * - With `deps.store`, returns that very store (or a read-only view of it when asked). If
 *   `config.backend` names a backend and the injected store reports another, fails naming both;
 *   naming none leaves the choice to the caller. Options given beside it are still decoded
 *   strictly against its backend's schema when that backend is registered.
 * - Otherwise opens the named backend (default `"file"`) with its options decoded strictly.
 *
 * @example The file backend from configuration
 * ```ts
 * import { openStore } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const store = await openStore({ backend: "file", options: { dir } });
 * assert.equal(store.info().backend, "file");
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @param config The backend, its options and `readOnly`.
 * @param deps What the backend needs from the host.
 * @returns The store.
 * @throws {ConfigError} on an unknown backend, bad options or a backend mismatch.
 */
export async function openStore(config: StoreConfig = {}, deps: StoreDeps = {}): Promise<Store> {
  // The config may be a Proxy or carry getters: read it once, into plain values.
  config = readConfig(config);
  const extra = Object.keys(config).find((k) => !CONFIG_FIELDS.includes(k));
  if (extra !== undefined) {
    throw new ConfigError(
      `Invalid memory config: unknown field ${quote(extra)}; allowed fields: ${
        CONFIG_FIELDS.map((k) => quote(k)).join(", ")
      }`,
    );
  }
  const { backend, options, readOnly } = config;
  if (backend !== undefined && typeof backend !== "string") {
    throw new ConfigError(
      `Invalid memory config: "backend" must be a string, got ${describeType(backend)}`,
    );
  }
  if (readOnly !== undefined && typeof readOnly !== "boolean") {
    throw new ConfigError(
      `Invalid memory config: "readOnly" must be a boolean, got ${describeType(readOnly)}`,
    );
  }
  if (deps === null || typeof deps !== "object") {
    throw new ConfigError(`Invalid memory dependencies: expected an object`);
  }
  let store: Store;
  if (deps.store !== undefined) {
    const injected = deps.store;
    if (injected === null || typeof injected !== "object" || typeof injected.info !== "function") {
      throw new ConfigError(`Invalid memory dependencies: "store" is not a Store`);
    }
    const actual = injectedBackend(injected);
    if (backend !== undefined && backend !== actual) {
      throw new ConfigError(
        `Cannot open memory: the config names backend ${quote(backend)} but the injected store is ${
          quote(actual)
        }`,
      );
    }
    // Options configured beside an injected store are still checked, so a typo fails the same
    // way whether or not a host injects the store.
    const definition = registry.get(actual);
    if (options !== undefined && definition !== undefined) {
      decodeOptions(actual, options, definition.options);
    }
    // The store itself, not a wrapper: the caller asked for this object. The memory tools and the
    // system note trace the calls they make through any store.
    store = injected;
  } else {
    const name = backend ?? "file";
    const definition = registry.get(name);
    if (definition === undefined) {
      throw new ConfigError(
        `Cannot open memory: unknown backend ${quote(name)}; registered backends: ${
          registeredBackends().map((k) => quote(k)).join(", ")
        }`,
      );
    }
    const decoded = decodeOptions(name, options, definition.options);
    let opened: Store;
    try {
      opened = await definition.open(decoded, deps, { readOnly: readOnly === true });
    } catch (e) {
      if (e instanceof MemoryError) throw e;
      throw new ConfigError(
        `Cannot open memory: backend ${quote(name)} failed to open a store (${errorKind(e)})`,
        { cause: e },
      );
    }
    store = instrument(opened);
  }
  return readOnly ? readOnlyStore(store) : store;
}

// The backend name an injected store reports; a store whose info() throws or lies about its
// shape is a configuration problem, reported as one.
function injectedBackend(store: Store): string {
  let backend: unknown;
  try {
    backend = store.info().backend;
  } catch (e) {
    throw new ConfigError(
      `Invalid memory dependencies: the injected store's info() failed (${errorKind(e)})`,
      { cause: e },
    );
  }
  if (typeof backend !== "string") {
    throw new ConfigError(
      `Invalid memory dependencies: the injected store's info().backend must be a string, got ${
        describeType(backend)
      }`,
    );
  }
  return backend;
}

function readConfig(config: unknown): StoreConfig {
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    throw new ConfigError(`Invalid memory config: expected an object, got ${describeType(config)}`);
  }
  try {
    return Object.fromEntries(Object.entries(config)) as StoreConfig;
  } catch (e) {
    throw new ConfigError(
      `Invalid memory config: reading it failed (${errorKind(e)})`,
      { cause: e },
    );
  }
}
