// What a worker measures: the library's store or a floor, behind one small interface, and the
// entries every target writes (the same bytes, so only the code path differs).

import { ExistsError, Scope, serializeEntry, StaleError, type Store } from "../mod.ts";
import { DESCRIPTION } from "./_location.ts";

/** Conflict counters one phase accumulates. */
export type Conflicts = { exists: number; stale: number; retries: number };

/** One operation path under test. */
export interface Target {
  /** Creates `key`; `false` when it already existed. */
  create(key: string): Promise<boolean>;
  /** Replaces what `key` holds, re-reading and retrying on a stale revision. */
  update(key: string, c: Conflicts): Promise<void>;
  /** Reads `key`; `false` when what came back is not an entry a writer wrote. */
  read(key: string): Promise<boolean>;
  /** Deletes `key`; `true` when it existed. */
  delete(key: string): Promise<boolean>;
  /** Adds one to the counter held under `key` (read, then a revision-checked update). */
  increment(key: string, c: Conflicts): Promise<void>;
}

// Every retry loop gives up after this many attempts, so a target or peer that never settles (a
// key gone missing, a lock never released) fails the run instead of spinning forever.
const MAX_ATTEMPTS = 10_000;

/**
 * Runs `attempt` until it returns `true` (`retry` is true from the second call on); resolves to
 * the conflicts before that, also counted as stale updates and retries in `c`.
 */
export async function retrying(attempt: (retry: boolean) => Promise<boolean>, c?: Conflicts) {
  for (let conflicts = 0; conflicts < MAX_ATTEMPTS; conflicts++) {
    if (!(await attempt(conflicts > 0))) continue;
    if (c !== undefined) {
      c.stale += conflicts;
      c.retries += conflicts;
    }
    return conflicts;
  }
  throw new Error(`Gave up after ${MAX_ATTEMPTS} attempts`);
}

/** `fn` as an attempt for `retrying`: `false` when it throws an error `isConflict` accepts. */
export function unless(isConflict: (e: unknown) => boolean, fn: (r: boolean) => Promise<unknown>) {
  const conflict = (e: unknown) => isConflict(e) ? false : Promise.reject(e);
  return (retry: boolean) => fn(retry).then(() => true, conflict);
}

/** The entries a worker writes. */
export type Entries = ReturnType<typeof entriesOf>;

/** Bodies of `valueSize` for create and update, their serialized bytes, and checks of a read. */
export function entriesOf(valueSize: number) {
  const bytesOf = (body: string) => new TextEncoder().encode(serializeEntry(DESCRIPTION, body));
  const [createContent, updateContent] = ["c".repeat(valueSize), "u".repeat(valueSize)];
  const [createBytes, updateBytes] = [bytesOf(createContent), bytesOf(updateContent)];
  // The serialized header alone: a floor's counter body starts after it.
  const headerBytes = bytesOf("").length;
  // Whether a body is one a writer wrote, whole: first and last character both "c" or both "u".
  const whole = (first: unknown, last: unknown, [c, u]: unknown[]) =>
    valueSize === 0 || ((first === c || first === u) && last === first);
  const isWrittenContent = (content: string) =>
    content.length === valueSize && whole(content[0], content[valueSize - 1], ["c", "u"]);
  const isWrittenBytes = (bytes: Uint8Array) =>
    bytes.length === createBytes.length && whole(bytes[headerBytes], bytes.at(-1), [0x63, 0x75]);
  const contents = { valueSize, createContent, updateContent, headerBytes };
  return { ...contents, createBytes, updateBytes, bytesOf, isWrittenContent, isWrittenBytes };
}

// By name too: today's library (bench/reference.json's commit) throws its own classes.
const named = (e: unknown, name: string) => e instanceof Error && e.name === name;
const isStale = (e: unknown) => e instanceof StaleError || named(e, "StaleError");
const isExists = (e: unknown) => e instanceof ExistsError || named(e, "ExistsError");

/**
 * The library's store as a target. With `checked` (jetstream) it keeps one Scope per run, as one
 * agent run would, and reads a key it never saw before updating it (the floor does the same with
 * its own revisions); the file store without readBeforeUpdate needs neither. `checked` may make
 * that Scope (today's library, bench/reference.json's commit, takes only its own).
 */
export function libraryTarget(
  store: Store,
  entries: Entries,
  checked: boolean | (() => unknown),
): Target {
  const opts = checked === false
    ? {}
    : { scope: (checked === true ? new Scope() : checked()) as Scope };
  const known = new Set<string>();
  const readInto = async (key: string) => {
    const entry = await store.read(key, opts);
    known.add(key);
    return entry;
  };
  // An update of `key`; `reread` reads it first (its revision into the Scope).
  const write = async (key: string, content: string, reread = false) => {
    if (reread) await readInto(key);
    await store.update(key, DESCRIPTION, content, opts);
  };
  return {
    async create(key) {
      const created = await store.create(key, DESCRIPTION, entries.createContent, opts)
        .then(() => true, (e) => isExists(e) ? false : Promise.reject(e));
      if (created) known.add(key);
      return created;
    },
    async update(key, c) {
      if (checked && !known.has(key)) await readInto(key);
      const attempt = (retry: boolean) => write(key, entries.updateContent, retry);
      await retrying(unless(isStale, attempt), c);
    },
    read: async (key) => entries.isWrittenContent((await readInto(key)).content),
    delete(key) {
      known.delete(key);
      return store.delete(key, opts);
    },
    async increment(key, c) {
      const attempt = async () => write(key, String(Number((await readInto(key)).content) + 1));
      await retrying(unless(isStale, attempt), c);
    },
  };
}
