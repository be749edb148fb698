/**
 * Anchors: a store's state saved (every key's newest revision and hash) so that a later check
 * also sees what no chain can show on its own: a key removed whole, a chain rewritten, a memory
 * rolled back to before the anchor. Keep the anchor (or its SHA-256) where the store's writers
 * cannot reach it.
 *
 * @module
 */

import { ConfigError } from "./errors.ts";
import type { Evidence } from "./backend.ts";
import type { CallOptions, HistoryProblem, Store, Version } from "./types.ts";
import { describeType, quote } from "./text.ts";
import { withHistory } from "./history_call.ts";
import { isChainHash } from "./chain.ts";

/** The `kind` every anchor carries. */
export const ANCHOR_KIND = "agentmem.anchor";

/** One key's anchored state: its newest version when the anchor was saved. */
export interface AnchoredKey {
  /** The newest version's revision. */
  readonly revision: string;
  /** Its chain hash. */
  readonly hash: string;
  /** What it did. */
  readonly op: Version["op"];
}

/** A store's anchored state, JSON-serializable (what `agentmem check --save-anchor` writes). */
export interface Anchor {
  /** Always `"agentmem.anchor"`. */
  readonly kind: typeof ANCHOR_KIND;
  /** The anchor format, `1`. */
  readonly version: 1;
  /** The backend it was saved from. */
  readonly backend: string;
  /** The store's `info().location`. */
  readonly location: string;
  /** When it was saved (ISO 8601 UTC, this process's clock). */
  readonly at: string;
  /** Every key's state, by the name its chain covers (the bucket key on jetstream). */
  readonly keys: Readonly<Record<string, AnchoredKey>>;
}

/** What `checkAnchor` found. */
export interface AnchorCheck {
  /** The anchored keys this store covers that were checked. */
  readonly checked: number;
  /** Anchored keys outside what this store covers (another jetstream prefix), not checked. */
  readonly outside: number;
  /** Every anchored key whose chain no longer extends its anchored state. */
  readonly problems: HistoryProblem[];
}

/**
 * Saves the state of every key of `store`'s history: its newest revision and hash.
 *
 * @example Anchor, then check
 * ```ts
 * import { checkAnchor, openFileStore, saveAnchor } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const store = await openFileStore({ dir });
 * await store.create("plan", "The plan", "v1");
 * const anchor = await saveAnchor(store);
 * await store.update("plan", "The plan", "v2");
 * assert.deepEqual((await checkAnchor(store, anchor)).problems, []);
 * await Deno.remove(`${dir}/plan.md`); // removed by hand: no delete version
 * await Deno.remove(`${dir}/.history`, { recursive: true });
 * const after = await checkAnchor(store, anchor);
 * assert.deepEqual(after.problems.map((p) => p.problem), ["removed"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @param store A store with history on.
 * @param opts An abort signal.
 * @returns The anchor, to be written somewhere the store's writers cannot reach.
 * @throws {ConfigError} when the store keeps no history.
 */
export function saveAnchor(store: Store, opts?: Pick<CallOptions, "signal">): Promise<Anchor> {
  return withHistory(
    store,
    { op: "anchor", what: "save an anchor", opts, validate: () => undefined },
    async (ops, c, ext) => {
      const evidence = await ops.evidence(c);
      const keys: Record<string, AnchoredKey> = {};
      for (const k of [...evidence.keys].sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const tip = k.head ?? (k.cut === undefined ? undefined : { ...k.cut, op: "delete" });
        if (tip === undefined) continue;
        Object.defineProperty(keys, k.name, {
          value: { revision: tip.revision, hash: tip.hash, op: tip.op },
          enumerable: true,
        });
      }
      return {
        kind: ANCHOR_KIND,
        version: 1,
        backend: ext.backend,
        location: store.info().location,
        at: new Date().toISOString(),
        keys,
      };
    },
  );
}

/**
 * Checks that every anchored key's chain still extends its anchored state: the anchored version
 * is still the one the chain holds at that revision, or was cut by retention (which left a
 * record); the memory is not older than it; the key was not removed without a trace.
 *
 * @param store A store with history on.
 * @param anchor What `saveAnchor` returned (parsed back from JSON is fine).
 * @param opts An abort signal.
 * @returns How many keys were checked and every problem found (`removed`, `rewritten`,
 * `rolled_back`, `missing`).
 * @throws {ConfigError} when the anchor is malformed, from another backend, or the store keeps
 * no history.
 */
export function checkAnchor(
  store: Store,
  anchor: Anchor,
  opts?: Pick<CallOptions, "signal">,
): Promise<AnchorCheck> {
  return withHistory(store, {
    op: "anchor",
    what: "check an anchor",
    opts,
    validate: () => {
      const why = anchorProblem(anchor);
      if (why !== undefined) throw new ConfigError(`Cannot check the anchor: ${why}`);
      return undefined;
    },
  }, async (ops, c, ext) => {
    if (anchor.backend !== ext.backend) {
      throw new ConfigError(
        `[memory:${ext.backend}] Cannot check the anchor: it was saved from a ${
          quote(anchor.backend)
        } store, this is a ${quote(ext.backend)} one`,
      );
    }
    return judge(anchor, await ops.evidence(c));
  });
}

function judge(anchor: Anchor, evidence: Evidence): AnchorCheck {
  const byName = new Map(evidence.keys.map((k) => [k.name, k]));
  const problems: HistoryProblem[] = [];
  let checked = 0;
  let outside = 0;
  for (const [name, a] of Object.entries(anchor.keys)) {
    if (!name.startsWith(evidence.within)) {
      outside++;
      continue;
    }
    checked++;
    const k = byName.get(name);
    const key = k?.key ?? name.slice(evidence.within.length);
    const revision = a.revision;
    const problem = (kind: HistoryProblem["problem"], reason: string) =>
      problems.push({ key, revision, problem: kind, reason });
    if (k === undefined) {
      problem(
        "removed",
        `anchored at revision ${revision}, it is gone: no version, no delete version, no retention record`,
      );
      continue;
    }
    const kept = k.versions.get(revision);
    if (kept !== undefined) {
      if (kept !== a.hash) {
        problem("rewritten", `the version at revision ${revision} is not the one anchored`);
      }
      continue;
    }
    const n = Number(revision);
    if (k.cut !== undefined && Number(k.cut.revision) >= n) {
      if (k.cut.revision === revision && k.cut.hash !== a.hash) {
        problem("rewritten", `the version at revision ${revision} is not the one anchored`);
      }
      continue; // cut by retention, which left its record
    }
    const head = k.head === undefined ? undefined : Number(k.head.revision);
    if (head === undefined || head < n) {
      problem(
        "rolled_back",
        head === undefined
          ? `anchored at revision ${revision}, it keeps no version from it on`
          : `it holds revision ${k.head!.revision}, older than the anchored ${revision}`,
      );
      continue;
    }
    problem(
      "missing",
      `the anchored version ${revision} is gone from its chain, and no retention record explains it`,
    );
  }
  problems.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { checked, outside, problems };
}

const OPS: ReadonlySet<string> = new Set(["create", "update", "delete"]);

function anchorProblem(anchor: unknown): string | undefined {
  if (anchor === null || typeof anchor !== "object" || Array.isArray(anchor)) {
    return `expected an anchor object, got ${describeType(anchor)}`;
  }
  const a = anchor as Record<string, unknown>;
  if (a.kind !== ANCHOR_KIND) return `"kind" is ${quote(a.kind)}, expected "${ANCHOR_KIND}"`;
  if (a.version !== 1) return `"version" is ${quote(a.version)}, this library reads version 1`;
  if (typeof a.backend !== "string") return `"backend" must be a string`;
  if (typeof a.keys !== "object" || a.keys === null || Array.isArray(a.keys)) {
    return `"keys" must map names to { revision, hash, op }`;
  }
  for (const [name, v] of Object.entries(a.keys)) {
    const k = v as Record<string, unknown> | null;
    if (
      k === null || typeof k !== "object" || typeof k.revision !== "string" ||
      !/^[1-9][0-9]{0,15}$/.test(k.revision) || !isChainHash(k.hash) ||
      typeof k.op !== "string" || !OPS.has(k.op)
    ) return `the entry for ${quote(name)} is not { revision, hash, op }`;
  }
  return undefined;
}
