/**
 * Review: writes a store holds instead of making them (store option `review`), and the operator's
 * decisions. An approval is an ordinary write of the proposal (a version with `via: "review"`,
 * the proposal's run and the approver's actor), checked against the version it was made against;
 * a rejection writes nothing to the memory. Both are kept as decided proposals for as long as the
 * history keeps versions by age (`proposals(store, { status: "decided" })`), so `agentmem log`
 * shows them beside the versions. Of two operators deciding one proposal at once, exactly one
 * does; the other is told it was decided.
 *
 * @module
 */

import { ConfigError, MemoryError, NotFoundError, StaleError } from "./errors.ts";
import { PROVENANCE_ID, Scope } from "./scope.ts";
import type { Call, Claim, HistoryOps } from "./backend.ts";
import type {
  CallOptions,
  HistoryProblem,
  Proposal,
  ProposalDecision,
  ReviewMode,
  Store,
  Version,
} from "./types.ts";
import { validateKey, validateWrite, type ValidWrite } from "./validate.ts";
import { decided, PROPOSAL_ID } from "./proposal_record.ts";
import { expiryBefore, MAX_PENDING_PROPOSALS } from "./hold.ts";
import { describeType, quote } from "./text.ts";
import { refuseReadOnly, safeBackend, withHistory } from "./history_call.ts";
import { randomHex } from "./random.ts";

export { MAX_PENDING_PROPOSALS };

/** A claim not settled this long after it was made is taken to be abandoned (its holder died). */
export const CLAIM_LEASE_MS = 60_000;

/** Which proposals `proposals()` returns. */
export interface ProposalFilter {
  /** Only this key's. */
  readonly key?: string | undefined;
  /** Only those of this run. */
  readonly run?: string | undefined;
  /** `"pending"` (the default), `"decided"` (approved or rejected), or `"all"`. */
  readonly status?: "pending" | "decided" | "all" | undefined;
  /** At most this many (the oldest that match). */
  readonly limit?: number | undefined;
}

/** Proposals, with what the read skipped (a damaged record) in `problems` (not enumerable). */
export type ProposalList = Proposal[] & { readonly problems: readonly HistoryProblem[] };

/** Options of `approveProposal`. */
export interface ApproveOptions {
  /** Write it even though the key changed since it was proposed (default `false`). */
  readonly force?: boolean | undefined;
  /** The approver's scope: its actor is recorded as the version's actor. */
  readonly scope?: Scope | null | undefined;
  /** Aborting fails the call with `UnavailableError`. */
  readonly signal?: AbortSignal | undefined;
}

/** Options of `rejectProposal`. */
export interface RejectOptions {
  /** Why, in a line (at most 500 characters), kept with the decision. */
  readonly reason?: string | undefined;
  /** The rejecter's scope: its actor is recorded as who decided. */
  readonly scope?: Scope | null | undefined;
  /** Aborting fails the call with `UnavailableError`. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * The proposals of `store`, oldest first: by default the pending ones, with what each would write.
 * Expired ones (older than the history retention's `days`) are not listed and are removed.
 *
 * @example A tainted run's write is held, shown, and approved
 * ```ts
 * import { approveProposal, openFileStore, proposals, Scope } from "@agentmem/memory";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * const store = await openFileStore({ dir, review: "tainted" });
 * const run = new Scope({ run: "run-web", tainted: true });
 * await store.create("tip", "A travel tip", "Book early", { scope: run });
 * assert.deepEqual(await store.list(), []); // held: no one sees it yet
 * const [held] = await proposals(store);
 * assert.deepEqual([held!.key, held!.op, held!.content], ["tip", "create", "Book early"]);
 * await approveProposal(store, held!.id, { scope: new Scope({ actor: "operator" }) });
 * assert.equal((await store.read("tip")).content, "Book early");
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @param store A store with history on.
 * @param filter Key, run, status and a limit.
 * @param opts An abort signal.
 * @returns The proposals; `problems` names the records that could not be read.
 * @throws {ConfigError} when the store keeps no history or the filter is malformed.
 */
export function proposals(
  store: Store,
  filter: ProposalFilter = {},
  opts?: Pick<CallOptions, "signal">,
): Promise<ProposalList> {
  return withHistory(store, {
    op: "proposals",
    what: "list the proposals",
    opts,
    validate: () => checkFilter(store, filter),
  }, async (h, c) => {
    const review = h.review;
    if (review === undefined) return proposalList([], []);
    const before = expiryBefore(h.retention.days);
    const status = filter.status ?? "pending";
    const problems: HistoryProblem[] = [];
    const found: Proposal[] = [];
    for (const which of ["pending", "decided"] as const) {
      if (status !== "all" && status !== which) continue;
      const listed = await review.list(which, before, c);
      problems.push(...listed.problems);
      found.push(...listed.items.map((i) => i.proposal));
    }
    const out = found
      .filter((p) => filter.key === undefined || p.key === filter.key)
      .filter((p) => filter.run === undefined || p.run === filter.run)
      .map((p) => ({ p, at: Date.parse(p.at) }))
      .sort((a, b) => a.at - b.at || (a.p.id < b.p.id ? -1 : 1))
      .map(({ p }) => p);
    return proposalList(filter.limit === undefined ? out : out.slice(0, filter.limit), problems);
  });
}

/**
 * Writes proposal `id` as an ordinary write: a version with `via: "review"`, the proposal's run
 * and the approver's actor (not tainted: the operator approved it), the model's tool call id.
 * It is checked against the version the proposal was made against: when the key changed since,
 * `StaleError` says what changed, unless `force`. Capacity applies now. Of two approvers at once,
 * one writes it; the other gets `NotFoundError`.
 *
 * @param store A store with history on, not read-only.
 * @param id A pending proposal's id.
 * @param opts `force`, the approver's `scope`, an abort signal.
 * @returns The decided proposal, with the revision the approval wrote.
 * @throws {NotFoundError} when no pending proposal has the id (unknown, malformed, decided).
 * @throws {StaleError} when the key changed since the proposal, without `force`.
 * @throws {CapacityError} when the write would create a key in a full store.
 * @throws {ReadOnlyError} through a read-only store.
 */
export function approveProposal(
  store: Store,
  id: string,
  opts: ApproveOptions = {},
): Promise<Proposal> {
  return decide(store, id, opts, "approve", async (d) => {
    const { proposal, head, claim } = d;
    const changed = whatChanged(proposal, head);
    if (changed !== undefined && opts.force !== true) {
      throw new StaleError(
        `${d.prefix} Cannot approve proposal ${quote(id)} for memory ${
          quote(proposal.key)
        }: ${changed} since it was proposed; approve it with force to write it anyway, or reject it`,
        { key: proposal.key },
      );
    }
    const write = proposal.op === "delete" ? null : validWrite(proposal);
    // A forced delete of a key that holds nothing now has nothing to do.
    const live = head !== undefined && head.op !== "delete";
    const revision = write === null && !live ? undefined : await d.history.commitIf(
      proposal.key,
      claim.expected,
      write,
      { ...d.call, via: "review", scope: reviewScope(proposal, opts.scope), ...callIdOf(proposal) },
    );
    return {
      outcome: "approved",
      ...(revision === undefined ? {} : { revision }),
      ...(changed === undefined ? {} : { forced: true }),
    };
  });
}

/**
 * Decides proposal `id` against: nothing is written to the memory. The decision (who, when, the
 * reason) is kept as a decided proposal.
 *
 * @param store A store with history on, not read-only.
 * @param id A pending proposal's id.
 * @param opts The `reason`, the rejecter's `scope`, an abort signal.
 * @returns The decided proposal.
 * @throws {NotFoundError} when no pending proposal has the id (unknown, malformed, decided).
 * @throws {ConfigError} when the reason is not a line of at most 500 characters.
 * @throws {ReadOnlyError} through a read-only store.
 */
export function rejectProposal(
  store: Store,
  id: string,
  opts: RejectOptions = {},
): Promise<Proposal> {
  const reason = opts.reason;
  return decide(store, id, opts, "reject", () =>
    Promise.resolve({
      outcome: "rejected",
      ...(reason === undefined ? {} : { reason }),
    }), () => checkReason(store, reason));
}

interface Deciding {
  readonly prefix: string;
  readonly history: HistoryOps;
  readonly call: Call;
  readonly proposal: Proposal;
  /** The key's newest version when the proposal was claimed. */
  readonly head: Version | undefined;
  readonly claim: Claim;
}

type Outcome = Omit<ProposalDecision, "at" | "actor">;

// Claims the proposal (exactly one decider wins), finishes an abandoned approval whose write
// landed, runs `act`, records the decision; gives the claim back when `act` refused without
// writing (a stale or full store), keeps it when the outcome is unknown (its lease runs out and
// the next decider finds out whether the write landed).
function decide(
  store: Store,
  id: string,
  opts: ApproveOptions | RejectOptions,
  verb: "approve" | "reject",
  act: (d: Deciding) => Promise<Outcome>,
  check: () => void = () => {},
): Promise<Proposal> {
  return withHistory(store, {
    op: "review",
    what: `${verb} a proposal`,
    opts: { signal: opts.signal },
    validate: () => {
      checkScope(store, opts.scope);
      check();
      return undefined;
    },
  }, async (history, call, ext) => {
    refuseReadOnly(ext, undefined, `${verb} a proposal in`);
    const prefix = `[memory:${ext.backend}]`;
    const missing = (why: string) =>
      new NotFoundError(`${prefix} Cannot ${verb} proposal ${quote(id)}: ${why}`);
    if (typeof id !== "string" || !PROPOSAL_ID.test(id)) {
      throw missing(
        "no proposal has this id (an id is 16 lowercase hexadecimal characters, as proposals() lists it)",
      );
    }
    const review = history.review;
    const found = review === undefined ? undefined : await review.get(id, call);
    if (review === undefined || found === undefined) throw missing("no proposal has this id");
    if ("decided" in found) throw missing(decidedText(found.decided));
    const key = found.held.proposal.key;
    const [head] = (await history.versions(key, call)).items;
    const now = Date.now();
    const actor = opts.scope?.actor;
    const claim: Claim = {
      token: randomToken(),
      at: now,
      expected: head?.revision ?? null,
      ...(actor === undefined ? {} : { actor }),
    };
    const { proposal, previous } = await review
      .claim(id, { ...claim, takeOverBefore: now - CLAIM_LEASE_MS }, call)
      .catch(async (e) => {
        if (!(e instanceof NotFoundError)) throw e;
        const after = await review.get(id, call);
        throw missing(
          after !== undefined && "decided" in after
            ? decidedText(after.decided)
            : "another operator is deciding it right now",
        );
      });
    const record = (outcome: Outcome, by: string | undefined) => {
      const decision: ProposalDecision = {
        ...outcome,
        at: new Date().toISOString(),
        ...(by === undefined ? {} : { actor: by }),
      };
      return decided(proposal, decision);
    };
    // A decider that died after its write landed: finish its approval, as it was.
    const landed = previous === undefined
      ? undefined
      : await landedAt(history, proposal, previous, call);
    if (landed !== undefined) {
      const done = record({ outcome: "approved", revision: landed }, previous!.actor);
      await review.decide(id, claim, done, call);
      if (verb === "approve") return done;
      throw missing(decidedText(done));
    }
    let outcome: Outcome;
    try {
      outcome = await act({ prefix, history, call, proposal, head, claim });
    } catch (e) {
      // Refused without writing: pending again. Unknown (the backend failed): the claim stays.
      if (e instanceof MemoryError && e.code !== "unavailable") {
        await review.release(id, claim, call);
      }
      throw e;
    }
    const done = record(outcome, actor);
    await review.decide(id, claim, done, call);
    return done;
  });
}

// What changed in the key since `p` was proposed, in words, or `undefined` when nothing did.
function whatChanged(p: Proposal, head: Version | undefined): string | undefined {
  const live = head !== undefined && head.op !== "delete";
  if (p.base === undefined) {
    return live ? `it was created (${versionText(head!)})` : undefined;
  }
  if (head?.revision === p.base) return undefined;
  if (head === undefined) return `its versions since revision ${p.base} are gone`;
  return `it changed from revision ${p.base}: it now holds ${versionText(head)}`;
}

function versionText(v: Version): string {
  const who = [v.run === undefined ? undefined : `run ${v.run}`, `via ${v.via}`]
    .filter((x) => x !== undefined).join(" ");
  return `revision ${v.revision}, ${
    v.op === "delete" ? "a delete" : `an ${v.op}`
  } by ${who} at ${v.at}`;
}

function decidedText(p: Proposal): string {
  const d = p.decision!;
  const by = d.actor === undefined ? "" : ` by ${d.actor}`;
  return `it was already ${d.outcome} at ${d.at}${by}; only a pending proposal can be decided`;
}

// The version the abandoned claim `previous` wrote for `p`, if its write landed: the version
// right after the one it wrote over is the review's, of the same run, with what `p` writes.
async function landedAt(
  history: HistoryOps,
  p: Proposal,
  previous: Claim,
  call: Call,
): Promise<string | undefined> {
  const versions = (await history.versions(p.key, call)).items;
  const at = previous.expected === null
    ? versions.length
    : versions.findIndex((v) => v.revision === previous.expected);
  const next = at > 0 ? versions[at - 1] : undefined;
  if (next?.via !== "review" || next.run !== p.run) return undefined;
  if (p.op === "delete") return next.op === "delete" ? next.revision : undefined;
  if (next.op === "delete") return undefined;
  const entry = await history.readVersion(p.key, next.revision, call);
  return entry.description === p.description && entry.content === p.content
    ? next.revision
    : undefined;
}

function validWrite(p: Proposal): ValidWrite {
  return validateWrite(p.key, p.description, p.content ?? "");
}

// The scope an approval writes under: the proposal's run, the approver's actor, no taint.
function reviewScope(p: Proposal, approver: Scope | null | undefined): Scope {
  const actor = approver?.actor;
  if (p.run !== undefined) {
    return new Scope({ run: p.run, ...(actor === undefined ? {} : { actor }) });
  }
  return new RunlessScope(actor === undefined ? {} : { actor });
}

// A proposal made through a scope that names no run: its approval names none either.
class RunlessScope extends Scope {
  override get run(): string {
    return undefined as unknown as string;
  }
}

function callIdOf(p: Proposal): { callId?: string } {
  return p.callId === undefined ? {} : { callId: p.callId };
}

function proposalList(items: Proposal[], problems: readonly HistoryProblem[]): ProposalList {
  Object.defineProperty(items, "problems", { value: Object.freeze([...problems]) });
  return items as ProposalList;
}

function randomToken(): string {
  return randomHex(8);
}

const FILTER_FIELDS = ["key", "run", "status", "limit"];

function checkFilter(store: Store, filter: unknown): string | undefined {
  const fail = (why: string) =>
    new ConfigError(`[memory:${safeBackend(store)}] Cannot list the proposals: ${why}`);
  if (filter === null || typeof filter !== "object" || Array.isArray(filter)) {
    throw fail(`the filter must be an object, got ${describeType(filter)}`);
  }
  const f = filter as Record<string, unknown>;
  const extra = Object.keys(f).find((k) => !FILTER_FIELDS.includes(k));
  if (extra !== undefined) {
    throw fail(`unknown filter field ${quote(extra)}; allowed: ${FILTER_FIELDS.join(", ")}`);
  }
  if (f.run !== undefined && (typeof f.run !== "string" || !PROVENANCE_ID.test(f.run))) {
    throw fail(`"run" must be 1 to 128 characters of A-Z a-z 0-9 . _ : @ = -`);
  }
  if (f.status !== undefined && !["pending", "decided", "all"].includes(f.status as string)) {
    throw fail(`"status" must be "pending", "decided" or "all", got ${quote(f.status)}`);
  }
  const limit = f.limit;
  if (limit !== undefined && (!Number.isSafeInteger(limit) || (limit as number) < 1)) {
    throw fail(`"limit" must be a positive whole number, got ${quote(limit)}`);
  }
  return f.key === undefined ? undefined : validateKey(f.key);
}

function checkScope(store: Store, scope: unknown): void {
  if (scope !== undefined && scope !== null && !(scope instanceof Scope)) {
    throw new ConfigError(
      `[memory:${safeBackend(store)}] Option "scope" must be a Scope or null, got ${
        describeType(scope)
      }`,
    );
  }
}

// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

function checkReason(store: Store, reason: unknown): void {
  if (reason === undefined) return;
  const bad = typeof reason !== "string" || reason.length > 500 || CONTROL.test(reason);
  if (bad) {
    throw new ConfigError(
      `[memory:${
        safeBackend(store)
      }] Cannot reject a proposal: option "reason" must be one line of at most 500 characters, got ${
        typeof reason === "string" ? quote(reason) : describeType(reason)
      }`,
    );
  }
}

/** The `review` option both backends take. */
export const REVIEW_OPTION = {
  type: ["boolean", "string"],
  description: 'hold writes for review: false (default), "tainted" (a tainted run\'s) or "all"',
} as const;

/**
 * The review mode a decoded `review` option asks for.
 *
 * @throws {ConfigError} for anything but `false`, `"tainted"` and `"all"`, and for review
 * without history.
 */
export function reviewModeOf(
  backend: string,
  option: boolean | string | undefined,
  history: boolean,
): ReviewMode {
  if (option === undefined || option === false) return false;
  if (option !== "tainted" && option !== "all") {
    throw new ConfigError(
      `[memory:${backend}] Invalid options for the ${backend} backend: option "review" must be false, "tainted" or "all", got ${
        quote(option)
      }`,
    );
  }
  if (!history) {
    throw new ConfigError(
      `[memory:${backend}] Invalid options for the ${backend} backend: option "review" needs history (option "history" omitted or { versions, days }, not false)`,
    );
  }
  return option;
}
