// The one place that turns a backend's raw operations into a `Store`: validation before any I/O,
// abort checks, error normalization and telemetry, identical for every backend.

import { ConfigError, MemoryError, ReadOnlyError, UnavailableError } from "./errors.ts";
import { budgetOf, Scope } from "./scope.ts";
import { charged } from "./_budget.ts";
import type { CallOptions, Entry, ReviewMode, Store, Version } from "./types.ts";
import { heldReceiver, type HeldWrite, hold, holds } from "./hold.ts";
import { validateKey, validateWrite, type ValidWrite } from "./validate.ts";
import { withSpan } from "./telemetry.ts";
import { errorKind, quote } from "./text.ts";
import { isChecked } from "./checked.ts";
import { CALL_ID_PATTERN, VIA_PATTERN } from "./chain.ts";
import type { BackendOps, Call } from "./backend.ts";

/**
 * `id` when it is a legal `callId` (1 to 256 characters of `A-Z a-z 0-9 . _ : @ = -`), else
 * `undefined`: the tools pass a model's tool call id only when a store call would take it.
 */
export function legalCallId(id: unknown): string | undefined {
  return typeof id === "string" && CALL_ID_PATTERN.test(id) ? id : undefined;
}

/** What a store built by `buildStore` offers beyond the `Store` contract. */
export interface StoreExtensions {
  readonly backend: string;
  readonly ops: BackendOps;
  /** `true` for a read-only view: extensions that write must refuse. */
  readonly readOnly: boolean;
  /** Which writes the store holds for review. */
  readonly review: ReviewMode;
}

// The backend operations behind each store built here (and behind read-only views of them), so
// exported functions such as `auditStore` can reach what the `Store` interface does not carry.
const EXTENSIONS = new WeakMap<Store, StoreExtensions>();

/** What `store` offers beyond the contract, or `undefined` for a store not built here. */
export function extensionsOf(store: Store): StoreExtensions | undefined {
  return EXTENSIONS.get(store);
}

const INSTRUMENTED = Symbol("agentmem.instrumented");
const READ_ONLY = Symbol("agentmem.readOnly");

/** A store call, or an extension call made through an exported function. */
export type Op =
  | "list"
  | "read"
  | "create"
  | "update"
  | "delete"
  | "audit"
  | "entries"
  | "history"
  | "read_version"
  | "restore"
  | "audit_log"
  | "revert"
  | "anchor"
  | "sidecar"
  | "proposals"
  | "review"
  | "redact";
const VERB: Record<Op, string> = {
  list: "list memories",
  read: "read memory",
  create: "create memory",
  update: "update memory",
  delete: "delete memory",
  audit: "audit the store",
  entries: "read every memory",
  history: "read the history of memory",
  read_version: "read a version of memory",
  restore: "restore a version of memory",
  audit_log: "read the audit log",
  revert: "revert a run",
  anchor: "check the store against an anchor",
  sidecar: "use the store's sidecar",
  proposals: "list the proposals",
  review: "decide a proposal",
  redact: "redact memory",
};
// Calls that only read: an answer that comes after the caller gave up is not given.
const READS: ReadonlySet<Op> = new Set([
  "list",
  "read",
  "audit",
  "entries",
  "history",
  "read_version",
  "audit_log",
  "anchor",
  "proposals",
]);

/** What `buildStore` adds over a backend's raw operations. */
export interface BuildOptions {
  /** Which writes are held for review (store option `review`); needs `ops.history.review`. */
  readonly review?: ReviewMode | undefined;
}

/** Builds a `Store` over a backend's raw operations. */
export function buildStore(ops: BackendOps, options: BuildOptions = {}): Store {
  const info = Object.freeze({ backend: ops.info.backend, location: ops.info.location });
  const backend = info.backend;
  const review = options.review ?? false;
  if (review !== false && ops.history?.review === undefined) {
    throw new ConfigError(
      `[memory:${backend}] Invalid options for the ${backend} backend: option "review" needs history (option "history" omitted or { versions, days }, not false)`,
    );
  }
  const run = <T>(
    op: Op,
    opts: unknown,
    validate: () => string | undefined,
    fn: (c: Call) => Promise<T>,
  ) => runCall(backend, op, opts, validate, fn);
  // A write's proposal instead of the write, when the store holds it for review; the caller
  // hears of it when it asked (see hold.ts).
  const held = async (w: HeldWrite, c: Call, opts: unknown) => {
    const proposal = await hold(ops, w, c);
    if (proposal !== undefined) heldReceiver(opts)?.(proposal);
    return proposal !== undefined;
  };
  // A write validates its arguments once, then hands the valid write to the backend (or holds
  // it), charged to the run's budget.
  const write = (
    op: "create" | "update",
    opts: CallOptions | undefined,
    valid: () => ValidWrite,
  ) => {
    let w: ValidWrite;
    return run(
      op,
      opts,
      () => (w = valid()).key,
      (c) => {
        const counter = budgetOf(c.scope);
        const hold = holds(review, c);
        // Neither a budget nor review: the write itself, with nothing around it.
        if (counter === undefined && !hold) return ops[op](w, c);
        const made = async () => {
          if (hold) await held({ backend, op, key: w.key, write: w }, c, opts);
          else await ops[op](w, c);
        };
        // Without a budget there is nothing to charge, nor a refusal to word.
        return counter === undefined ? made() : charged(counter, charge(backend, op, w.key), made);
      },
    );
  };
  const store = markInstrumented({
    info: () => info,
    list: (opts) => run("list", opts, () => undefined, (c) => ops.list(c)),
    read: (key, opts) => run("read", opts, () => validateKey(key), (c) => readOne(ops, key, c)),
    create: (key, description, content, opts) =>
      write("create", opts, () => validateWrite(key, description, content)),
    update: (key, description, content, opts) =>
      write("update", opts, () => validateWrite(key, description, content)),
    delete: (key, opts) =>
      run("delete", opts, () => validateKey(key), (c) => {
        const counter = budgetOf(c.scope);
        const hold = holds(review, c);
        if (counter === undefined && !hold) return ops.delete(key, c);
        const made = () =>
          hold ? held({ backend, op: "delete", key }, c, opts) : ops.delete(key, c);
        if (counter === undefined) return made();
        return charged(counter, charge(backend, "delete", key), made, Boolean);
      }),
  });
  EXTENSIONS.set(store, { backend, ops, readOnly: false, review });
  return store;
}

// A read with a scope, on a store that keeps history, learns whether a tainted run wrote what it
// read (from the same read): the run then carries the taint (see `noteRead`).
async function readOne(ops: BackendOps, key: string, c: Call): Promise<Entry> {
  if (ops.history === undefined || c.scope === null) return await ops.read(key, c);
  const read = await ops.history.readLatest(key, c);
  noteRead(c, read.version);
  return read.entry;
}

/**
 * What reading a version does to the run: text a tainted run wrote may carry its poison, so the
 * reader is tainted too, unless its scope opted out (`new Scope({ propagateTaint: false })`).
 */
export function noteRead(call: Pick<Call, "scope">, version: Version | undefined): void {
  if (version?.tainted === true && call.scope?.propagateTaint === true) call.scope.taint();
}

/**
 * Runs one call the way every store call runs: validation first, inside the span, so a refused
 * call is traced and touches nothing; then the call options, an abort check, the call, and error
 * normalization. Exported functions that reach a backend's extensions run through here too.
 */
export function runCall<T>(
  backend: string,
  op: Op,
  opts: unknown,
  validate: () => string | undefined,
  fn: (c: Call) => Promise<T>,
): Promise<T> {
  return withSpan(
    `memory.${op}`,
    { "memory.backend": backend, "memory.operation": op },
    async (span) => {
      const key = validate();
      if (key !== undefined) span.setAttribute("memory.key", key);
      const call = checkCall(backend, opts);
      abortCheck(backend, op, key, call.signal);
      let result: T;
      try {
        result = await fn(call);
      } catch (e) {
        throw normalizeError(backend, op, key, e);
      }
      // A read whose caller gave up gets no answer, however fast it was; a write that
      // committed is reported as done, since it is.
      if (READS.has(op)) abortCheck(backend, op, key, call.signal);
      return result;
    },
  );
}

function checkCall(backend: string, opts: unknown): Call {
  if (opts === undefined || opts === null) {
    return { signal: undefined, scope: null, checked: false, via: "api", callId: undefined };
  }
  if (typeof opts !== "object") {
    throw new ConfigError(`[memory:${backend}] Call options must be an object`);
  }
  const { signal, scope, via, callId } = opts as CallOptions;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new ConfigError(`[memory:${backend}] Call option "signal" must be an AbortSignal`);
  }
  if (scope !== undefined && scope !== null && !(scope instanceof Scope)) {
    throw new ConfigError(`[memory:${backend}] Call option "scope" must be a Scope or null`);
  }
  if (via !== undefined && (typeof via !== "string" || !VIA_PATTERN.test(via))) {
    throw new ConfigError(
      `[memory:${backend}] Call option "via" must be 1 to 64 characters of A-Z a-z 0-9 . _ : @ = -, got ${
        quote(via)
      }`,
    );
  }
  if (callId !== undefined && (typeof callId !== "string" || !CALL_ID_PATTERN.test(callId))) {
    throw new ConfigError(
      `[memory:${backend}] Call option "callId" must be 1 to 256 characters of A-Z a-z 0-9 . _ : @ = -, got ${
        quote(callId)
      }`,
    );
  }
  return { signal, scope: scope ?? null, checked: isChecked(opts), via: via ?? "api", callId };
}

/** What a write takes of its run's budget, and how a refusal names the call. */
export function charge(
  backend: string,
  op: "create" | "update" | "delete",
  key: string | undefined,
): { kind: "writes" | "deletes"; what: string; key: string | undefined } {
  return {
    kind: op === "delete" ? "deletes" : "writes",
    what: `[memory:${backend}] Cannot ${what(op, key)}`,
    key,
  };
}

function what(op: Op, key: string | undefined): string {
  return key === undefined ? VERB[op] : `${VERB[op]} ${quote(key)}`;
}

/** Throws `UnavailableError` when `signal` has been aborted. */
export function abortCheck(
  backend: string,
  op: Op,
  key: string | undefined,
  signal: AbortSignal | undefined,
): void {
  if (signal?.aborted) {
    throw new UnavailableError(
      `[memory:${backend}] Cannot ${what(op, key)}: the call was aborted`,
      {
        key,
        cause: signal.reason,
      },
    );
  }
}

/**
 * Passes `MemoryError`s through; anything else becomes `UnavailableError` whose message names
 * only the error's kind, since a raw error's text can hold host paths or server addresses.
 */
function normalizeError(backend: string, op: Op, key: string | undefined, e: unknown): unknown {
  if (e instanceof MemoryError) return e;
  return new UnavailableError(
    `[memory:${backend}] Cannot ${what(op, key)}: the backend failed (${errorKind(e)})`,
    { key, cause: e },
  );
}

function markInstrumented(store: Store): Store {
  Object.defineProperty(store, INSTRUMENTED, { value: true });
  return Object.freeze(store);
}

/**
 * Wraps a store that did not come from `buildStore` (a third-party backend, an injected store)
 * so its calls make spans too. Stores already instrumented are returned unchanged.
 */
export function instrument(store: Store): Store {
  if ((store as unknown as Record<symbol, unknown>)[INSTRUMENTED]) return store;
  const backend = () => store.info().backend;
  const span = <T>(op: Op, key: unknown, fn: () => Promise<T>) =>
    withSpan(
      `memory.${op}`,
      typeof key === "string"
        ? { "memory.backend": backend(), "memory.operation": op, "memory.key": key }
        : { "memory.backend": backend(), "memory.operation": op },
      fn,
    );
  // A run's budget holds on a store of any make: each write is charged before it is made.
  const budgeted = <T>(
    op: "create" | "update" | "delete",
    key: unknown,
    opts: CallOptions | undefined,
    fn: () => Promise<T>,
  ) =>
    span(op, key, () => {
      const counter = budgetOf(opts?.scope);
      if (counter === undefined) return fn();
      const k = typeof key === "string" ? key : undefined;
      return charged(counter, charge(backend(), op, k), fn, (r) => r !== false);
    });
  return markInstrumented({
    info: () => store.info(),
    list: (opts) => span("list", undefined, () => store.list(opts)),
    read: (key, opts) => span("read", key, () => store.read(key, opts)),
    create: (key, d, c, opts) => budgeted("create", key, opts, () => store.create(key, d, c, opts)),
    update: (key, d, c, opts) => budgeted("update", key, opts, () => store.update(key, d, c, opts)),
    delete: (key, opts) => budgeted("delete", key, opts, () => store.delete(key, opts)),
  });
}

/**
 * A read-only view of `store`: `info`, `list` and `read` pass through; `create`, `update` and
 * `delete` reject with `ReadOnlyError` without touching storage.
 */
export function readOnlyStore(store: Store): Store {
  if (isReadOnly(store)) return store;
  const refuse = (op: Op, key: unknown) => {
    const k = validateKey(key);
    return Promise.reject(
      new ReadOnlyError(
        `[memory:${store.info().backend}] Cannot ${what(op, k)}: the store is read-only`,
        { key: k },
      ),
    );
  };
  const view: Store = {
    info: () => store.info(),
    list: (opts) => store.list(opts),
    read: (key, opts) => store.read(key, opts),
    create: (key) => tryReject(() => refuse("create", key)),
    update: (key) => tryReject(() => refuse("update", key)),
    delete: (key) => tryReject(() => refuse("delete", key)),
  };
  Object.defineProperty(view, READ_ONLY, { value: true });
  const ext = EXTENSIONS.get(store);
  if (ext !== undefined) EXTENSIONS.set(view, { ...ext, readOnly: true });
  Object.defineProperty(view, INSTRUMENTED, {
    value: (store as unknown as Record<symbol, unknown>)[INSTRUMENTED] === true,
  });
  return Object.freeze(view);
}

/**
 * A view of `store` whose `create`, `update` and `delete` first pass the key and the call options
 * to `adjust`, which throws to refuse the write (nothing is touched then) or returns the options
 * the write is made with; reads, and the extensions exported functions reach, pass through. For
 * a tool that may not write some keys (`protect`), or that asks to hear of held writes.
 */
export function writeView(
  store: Store,
  adjust: (key: unknown, opts: CallOptions | undefined) => CallOptions | undefined,
): Store {
  const view: Store = {
    info: () => store.info(),
    list: (opts) => store.list(opts),
    read: (key, opts) => store.read(key, opts),
    create: (key, d, c, opts) => tryReject(() => store.create(key, d, c, adjust(key, opts))),
    update: (key, d, c, opts) => tryReject(() => store.update(key, d, c, adjust(key, opts))),
    delete: (key, opts) => tryReject(() => store.delete(key, adjust(key, opts))),
  };
  const ext = EXTENSIONS.get(store);
  if (ext !== undefined) EXTENSIONS.set(view, ext);
  if (isReadOnly(store)) Object.defineProperty(view, READ_ONLY, { value: true });
  Object.defineProperty(view, INSTRUMENTED, {
    value: (store as unknown as Record<symbol, unknown>)[INSTRUMENTED] === true,
  });
  return Object.freeze(view);
}

function tryReject<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return fn();
  } catch (e) {
    return Promise.reject(e);
  }
}

/** `true` for a store made by `readOnlyStore` (or `openStore` with `readOnly: true`). */
export function isReadOnly(store: Store): boolean {
  return (store as unknown as Record<symbol, unknown>)[READ_ONLY] === true;
}
