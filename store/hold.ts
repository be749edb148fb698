// A write held for review (store option `review`), as `buildStore` makes it instead of the write:
// checked as the write would be (the key's state, read-before-update, capacity at the time), then
// kept as a proposal where no read, list, note or search sees it. The run's scope gains no
// revision from it (a held write authorizes nothing), and a held delete drops the one it had, as
// a delete does. A caller that asks (the tools, through `heldCall`) is told what was held.

import { CapacityError, ExistsError, NotFoundError, StaleError } from "./errors.ts";
import { Scope } from "./scope.ts";
import type { BackendOps, Call, EntryVersion, Head, HistoryOps, ReviewOps } from "./backend.ts";
import type { CallOptions, Proposal, ReviewMode } from "./types.ts";
import { checkCapacity, type ValidWrite } from "./validate.ts";
import { newProposalId } from "./proposal_record.ts";
import { quote } from "./text.ts";

/** The most proposals a store holds pending. */
export const MAX_PENDING_PROPOSALS = 1_024;

const DAY_MS = 24 * 60 * 60 * 1000;
const HELD: unique symbol = Symbol("agentmem.held");

/** `opts` asking to be told, through `told`, when the write is held for review. */
export function heldCall(opts: CallOptions, told: (proposal: Proposal) => void): CallOptions {
  return { ...opts, [HELD]: told } as CallOptions;
}

/** Who asked to be told of a held write, in `opts`. */
export function heldReceiver(opts: unknown): ((proposal: Proposal) => void) | undefined {
  if (opts === null || typeof opts !== "object") return undefined;
  const told = (opts as Record<symbol, unknown>)[HELD];
  return typeof told === "function" ? told as (proposal: Proposal) => void : undefined;
}

/** The review queue is full (a `CapacityError`; the tools say so in their own words). */
export class ReviewQueueFullError extends CapacityError {
  /** Always `true`: the queue, not the store, is full. */
  readonly reviewQueue = true;
}

/** Whether a call's write is held for review under `mode`. */
export function holds(mode: ReviewMode, call: Call): boolean {
  if (mode === false || call.scope === null) return false;
  return mode === "all" || call.scope.tainted;
}

/** The cut-off before which a proposal expires, for a store keeping versions `days` days. */
export function expiryBefore(days: number, now = Date.now()): number | undefined {
  return days > 0 ? now - days * DAY_MS : undefined;
}

/** A held write: what it is. */
export interface HeldWrite {
  readonly backend: string;
  readonly op: "create" | "update" | "delete";
  readonly key: string;
  /** The write (absent for a delete). */
  readonly write?: ValidWrite | undefined;
}

/**
 * Holds the write `w` for review and resolves with the proposal; `undefined` for a delete of a
 * key that holds nothing (nothing to propose, as a delete of it deletes nothing). Where the
 * version the write would be made against is known before the key is looked at (a create's is
 * none; an update's or delete's is the revision the run read, where the backend can tell), the
 * proposal is sent while the key is looked at, and withdrawn if the look refuses the write.
 *
 * @throws what the write would throw (`ExistsError`, `StaleError`, `CapacityError`), and
 * `CapacityError` when `MAX_PENDING_PROPOSALS` are pending.
 */
export async function hold(
  ops: BackendOps,
  w: HeldWrite,
  call: Call,
): Promise<Proposal | undefined> {
  const history = ops.history!;
  const review = history.review!;
  const add = async (base: string | undefined) => {
    const proposal = proposalOf(w, call, base);
    await addToQueue(review, history.retention.days, proposal, w, call);
    return proposal;
  };
  const hint = w.op === "create" ? undefined : review.baseHint?.(w.key, call);
  if (w.op !== "create" && hint === undefined) {
    const base = await check(history, w, call);
    return base === false ? undefined : await add(base);
  }
  const sent = add(hint);
  const [checked, proposal] = await Promise.allSettled([check(history, w, call), sent]);
  const withdraw = () =>
    proposal.status === "fulfilled" ? review.withdraw(proposal.value.id, call) : undefined;
  if (checked.status === "rejected" || checked.value === false) {
    await withdraw();
    if (checked.status === "rejected") throw checked.reason;
    return undefined;
  }
  if (proposal.status === "rejected") throw proposal.reason;
  if (checked.value === hint) return proposal.value;
  // Made against another version than the one the run read (read-before-update is off).
  await withdraw();
  return await add(checked.value);
}

/**
 * Checks `w` as the write would be checked, without writing: resolves with the revision of the
 * key's newest version (the proposal's base; `undefined` when it has none), or `false` for a
 * delete of a key that holds nothing.
 */
async function check(
  history: HistoryOps,
  w: HeldWrite,
  call: Call,
): Promise<string | undefined | false> {
  const review = history.review!;
  const { key, op, backend } = w;
  const refuse = (why: string) =>
    new StaleError(`[memory:${backend}] Cannot ${op} memory ${quote(key)}: ${why}`, { key });
  // A create is counted while the key is looked at (it holds nothing, most likely).
  const counting = op === "create" ? review.count(call) : undefined;
  counting?.catch(() => {});
  // The key as it is now, and the revision a read would record (in the backend's namespace).
  const { head, namespace } = await look(history, key, call);
  const now = head?.revision;
  const seen = namespace === undefined ? undefined : call.scope?.revision(namespace, key);
  if (op === "delete" && namespace !== undefined) call.scope?.forget(namespace, key);
  const checked = call.checked || (op === "update" && review.readBeforeUpdate);
  if (op === "create" && head !== undefined) {
    throw new ExistsError(
      `[memory:${backend}] Cannot create memory ${quote(key)}: a memory with this key exists`,
      { key },
    );
  }
  if (checked && op !== "create") {
    const again = op === "update" ? "update" : "delete";
    if (head === undefined) {
      throw refuse(
        seen === undefined
          ? `this run has not read it; read it first, then ${again}`
          : `it was deleted since this run read it; read it again, then ${again}`,
      );
    }
    if (seen === undefined || seen <= 0) {
      throw refuse(`this run has not read it; read it first, then ${again}`);
    }
    if (seen !== now) {
      throw refuse(`it changed since this run read it; read it again, then ${again}`);
    }
  }
  if (op === "delete" && head === undefined) return false;
  // A write that would create the key needs room for it now.
  if (head === undefined) checkCapacity(await (counting ?? review.count(call)), key);
  return head?.version;
}

// The key's newest version (`undefined`: none) and the namespace its revisions are recorded in
// (where a read tells it), through the review's own look where the backend has one.
async function look(
  history: HistoryOps,
  key: string,
  call: Call,
): Promise<{ head: Head | undefined; namespace: string | undefined }> {
  const own = history.review!.head;
  if (own !== undefined) {
    const head = await own(key, call);
    return { head, namespace: head?.namespace };
  }
  const scope = new Scope();
  let latest: EntryVersion | undefined;
  try {
    latest = await history.readLatest(key, { ...call, scope });
  } catch (e) {
    if (!(e instanceof NotFoundError)) throw e;
  }
  const [namespace] = Object.keys(scope.snapshot().revisions);
  const revision = namespace === undefined ? undefined : scope.revision(namespace, key);
  const head = latest === undefined || namespace === undefined || revision === undefined
    ? undefined
    : { namespace, revision, version: latest.version?.revision };
  return { head, namespace };
}

function proposalOf(w: HeldWrite, call: Call, base: string | undefined): Proposal {
  const scope = call.scope!;
  return {
    id: newProposalId(),
    key: w.key,
    op: w.op,
    ...(w.write === undefined
      ? {}
      : { description: w.write.description, content: w.write.content }),
    ...(base === undefined ? {} : { base }),
    ...(scope.run === undefined ? {} : { run: scope.run }),
    ...(scope.actor === undefined ? {} : { actor: scope.actor }),
    via: call.via,
    ...(call.callId === undefined ? {} : { callId: call.callId }),
    tainted: scope.tainted,
    at: nextAt(),
  };
}

let lastAt = 0;

// This process's clock, made strictly increasing, so one process's proposals list in the order
// they were made (a rename's two, say).
function nextAt(): string {
  lastAt = Math.max(Date.now(), lastAt + 1);
  return new Date(lastAt).toISOString();
}

async function addToQueue(
  review: ReviewOps,
  days: number,
  proposal: Proposal,
  w: HeldWrite,
  call: Call,
): Promise<void> {
  if (await review.add(proposal, MAX_PENDING_PROPOSALS, call)) return;
  // Expired proposals may still be counted: let them go, then try again.
  await review.list("pending", expiryBefore(days), call);
  if (await review.add(proposal, MAX_PENDING_PROPOSALS, call)) return;
  throw new ReviewQueueFullError(
    `[memory:${w.backend}] Cannot ${w.op} memory ${
      quote(w.key)
    }: the review queue is full (${MAX_PENDING_PROPOSALS} proposals pending); an operator must approve or reject some first`,
    { key: w.key },
  );
}
