/**
 * Redaction and purge: removing what a store keeps, for a secret written by mistake or a
 * right-to-erasure request. A redacted version loses its description and content wherever the
 * backend keeps them; its place, provenance and hash stay in the chain, with the digest of its
 * entry, so `agentmem check` still verifies it and reports it as redacted. A purge deletes the
 * key and redacts every version, and drops the writes held for review of it. Both drop the key's
 * records from the store's sidecar (the hybrid search's vectors, derived from its text).
 *
 * @module
 */

import { ConfigError, NotFoundError } from "./errors.ts";
import { Scope } from "./scope.ts";
import type { Redaction, Store, Version } from "./types.ts";
import { validateKey } from "./validate.ts";
import { checkRevision, refuseReadOnly, safeBackend, withHistory } from "./history_call.ts";
import { describeType, quote } from "./text.ts";
import type { HistoryOps } from "./backend.ts";

/** Options of `redactVersion` and `purgeKey`. */
export interface RedactOptions {
  /** Why, in a line of 1 to 200 characters, kept with the redaction. Required. */
  readonly reason: string;
  /** The operator's scope: its actor is recorded as who redacted. */
  readonly scope?: Scope | null | undefined;
  /** Aborting fails the call with `UnavailableError`; versions redacted already stay so. */
  readonly signal?: AbortSignal | undefined;
}

/** What `purgeKey` did. */
export interface PurgeResult {
  /** The key purged. */
  readonly key: string;
  /** Whether the key held a memory, which the purge deleted (a delete version, via "purge"). */
  readonly deleted: boolean;
  /** The versions whose description and content were removed, newest first. */
  readonly redacted: string[];
  /** How many proposals for the key (held writes, pending or decided) were dropped. */
  readonly proposals: number;
}

/**
 * Removes the description and content of version `revision` of `key` from every copy the
 * backend keeps (file: the version file and any other name of it; jetstream: the message on the
 * key's subject and in the history stream; on both, the search's vectors of the key in the
 * sidecar), and records who did it, when and why. The version
 * keeps its place, provenance and hash: `history()` lists it with `redacted`, `readVersion()` of
 * it is a `NotFoundError` saying so, and `check` verifies it from the kept digest. The memory's
 * newest version cannot be redacted: update or delete the memory first.
 *
 * @example Remove a secret written by mistake
 * ```ts
 * import { history, openFileStore, readVersion, redactVersion, Scope } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const store = await openFileStore({ dir });
 * await store.create("db", "Database", "password: hunter2");
 * await store.update("db", "Database", "password: see the vault");
 * const [, leaked] = await history(store, "db");
 * const scope = new Scope({ actor: "operator" });
 * await redactVersion(store, "db", leaked!.revision, { reason: "a password", scope });
 * await assert.rejects(readVersion(store, "db", leaked!.revision), /redacted/);
 * assert.equal((await history(store, "db"))[1]!.redacted?.reason, "a password");
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @param store A store with history on, not read-only.
 * @param key A legal key.
 * @param revision A revision `history` listed, of a create or an update.
 * @param opts The `reason` (required), the operator's `scope`, an abort signal.
 * @returns The version as `history()` now lists it.
 * @throws {NotFoundError} for a revision not kept (pruned, never written, malformed) or redacted
 * already.
 * @throws {ConfigError} for the memory's newest version, a delete (it holds nothing), a version
 * in chain format 1, or a missing or malformed reason.
 * @throws {ReadOnlyError} through a read-only store.
 */
export function redactVersion(
  store: Store,
  key: string,
  revision: string,
  opts: RedactOptions,
): Promise<Version> {
  return withHistory(store, {
    op: "redact",
    what: "redact a version",
    opts: { signal: opts?.signal },
    validate: () => {
      checkOptions(store, opts, "redact a version");
      return validateKey(key);
    },
  }, async (h, c, ext) => {
    checkRevision(key, revision);
    refuseReadOnly(ext, key, "redact a version of");
    const refuse = (why: string) =>
      new ConfigError(
        `[memory:${ext.backend}] Cannot redact version ${revision} of memory ${quote(key)}: ${why}`,
      );
    const { items } = await h.versions(key, c);
    const v = items.find((x) => x.revision === revision);
    if (v === undefined) {
      throw new NotFoundError(
        `[memory:${ext.backend}] Cannot redact version ${revision} of memory ${
          quote(key)
        }: it is not kept (never written, or pruned); history() lists the revisions there are`,
        { key },
      );
    }
    if (v.redacted !== undefined) {
      throw new NotFoundError(
        `[memory:${ext.backend}] Cannot redact version ${revision} of memory ${
          quote(key)
        }: it was redacted already, at ${v.redacted.at}${
          v.redacted.actor === undefined ? "" : ` by ${v.redacted.actor}`
        }`,
        { key },
      );
    }
    if (v === items[0] && v.op !== "delete") {
      throw refuse(
        "it is what the memory holds now; update or delete the memory first, then redact this version",
      );
    }
    if (v.op === "delete") throw refuse("it is a delete, which holds no description or content");
    // The search's vectors of the key may be of the version's text (no search since it was
    // replaced). First: should it fail, nothing is redacted yet, and the call can run again.
    await ext.ops.sidecar?.forget(key, c);
    await redactWith(h, key, { revisions: [revision], redaction: redactionOf(opts) }, c);
    const after = (await h.versions(key, c)).items.find((x) => x.revision === revision);
    return after ?? v;
  });
}

/**
 * Deletes `key` (a delete version, `via: "purge"`, when it holds a memory) and removes the
 * description and content of every one of its versions, as `redactVersion` does (versions in
 * chain format 1, which cannot stay verifiable without their bytes, are removed under a
 * retention record), drops the writes held for review of it and the search's vectors of it:
 * for a right-to-erasure request. The versions' places and provenance stay, each recorded as redacted with `reason`.
 *
 * @param store A store with history on, not read-only.
 * @param key A legal key.
 * @param opts The `reason` (required), the operator's `scope`, an abort signal.
 * @returns Whether a memory was deleted, the versions redacted, the proposals dropped.
 * @throws {NotFoundError} when the key has no versions and holds nothing.
 * @throws {ConfigError} for a missing or malformed reason.
 * @throws {StaleError} when a write to the key lands meanwhile (run it again).
 * @throws {ReadOnlyError} through a read-only store.
 */
export function purgeKey(store: Store, key: string, opts: RedactOptions): Promise<PurgeResult> {
  return withHistory(store, {
    op: "redact",
    what: "purge a memory",
    opts: { signal: opts?.signal },
    validate: () => {
      checkOptions(store, opts, "purge a memory");
      return validateKey(key);
    },
  }, async (h, c, ext) => {
    refuseReadOnly(ext, key, "purge");
    const redaction = redactionOf(opts);
    const actor = opts.scope?.actor;
    const [head] = (await h.versions(key, c)).items;
    // An entry with no version (written with history off) is a memory too.
    const live = head !== undefined
      ? head.op !== "delete"
      : await h.readLatest(key, { ...c, scope: null }).then(() => true, (e) => {
        if (e instanceof NotFoundError) return false;
        throw e;
      });
    if (live) {
      // The delete is the operator's write, recorded as such.
      const scope = new Scope(actor === undefined ? {} : { actor });
      await h.commitIf(key, head?.revision ?? null, null, { ...c, via: "purge", scope });
    }
    const deleted = live;
    const versions = (await h.versions(key, c)).items;
    if (versions.length === 0 && !deleted) {
      throw new NotFoundError(
        `[memory:${ext.backend}] Cannot purge memory ${
          quote(key)
        }: it has no versions and holds nothing`,
        { key },
      );
    }
    const [newest] = versions;
    const revisions = versions
      .filter((v) => v !== newest && v.op !== "delete" && v.redacted === undefined)
      .map((v) => v.revision);
    if (revisions.length > 0) await redactWith(h, key, { revisions, redaction, orCut: true }, c);
    const proposals = h.review === undefined ? 0 : await dropProposals(h, key, c);
    // Last, after the delete: a search that wrote the key's record meanwhile finds it gone (see
    // tools/_vectors.ts); a purge run again after a failure forgets again.
    await ext.ops.sidecar?.forget(key, c);
    return { key, deleted, redacted: revisions, proposals };
  });
}

async function redactWith(
  h: HistoryOps,
  key: string,
  o: Parameters<NonNullable<HistoryOps["redact"]>>[1],
  c: Parameters<HistoryOps["versions"]>[1],
): Promise<void> {
  if (h.redact === undefined) {
    throw new ConfigError(`Cannot redact versions of memory ${quote(key)}: this store cannot`);
  }
  await h.redact(key, o, c);
}

// Drops every proposal for `key`, pending (with the content it would write) or decided.
async function dropProposals(
  h: HistoryOps,
  key: string,
  c: Parameters<HistoryOps["versions"]>[1],
): Promise<number> {
  const review = h.review!;
  let n = 0;
  for (const which of ["pending", "decided"] as const) {
    const { items } = await review.list(which, undefined, c);
    for (const { proposal } of items) {
      if (proposal.key !== key) continue;
      await review.drop(proposal.id, c);
      n++;
    }
  }
  return n;
}

function redactionOf(opts: RedactOptions): Redaction {
  const actor = opts.scope?.actor;
  return {
    at: new Date().toISOString(),
    ...(actor === undefined ? {} : { actor }),
    reason: opts.reason,
  };
}

// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
// A reason fits beside a version's record where a backend keeps it (a file's record line).
const MAX_REASON = 200;

function checkOptions(store: Store, opts: unknown, what: string): void {
  const fail = (why: string) =>
    new ConfigError(`[memory:${safeBackend(store)}] Cannot ${what}: ${why}`);
  if (opts === null || typeof opts !== "object") {
    throw fail(`expected options { reason, scope?, signal? }, got ${describeType(opts)}`);
  }
  const { reason, scope } = opts as Record<string, unknown>;
  if (
    typeof reason !== "string" || reason.trim() === "" || reason.length > MAX_REASON ||
    CONTROL.test(reason)
  ) {
    throw fail(
      `option "reason" must say why, in one line of 1 to ${MAX_REASON} characters, got ${
        typeof reason === "string" ? quote(reason) : describeType(reason)
      }`,
    );
  }
  if (scope !== undefined && scope !== null && !(scope instanceof Scope)) {
    throw fail(`option "scope" must be a Scope or null, got ${describeType(scope)}`);
  }
}
