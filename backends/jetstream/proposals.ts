// Writes held for review, in a jetstream store: the bucket's review stream `KVR_<bucket>` (which
// `agentmem bucket init` makes), never the bucket's own stream or its history, so no listing,
// count or history read meets a proposal. A pending proposal is the last message on
// `$KVR.<bucket>.<p>.p.<id>` (`<p>` the prefix, `~` for a flat keyspace), a decided one on
// `...<p>.d.<id>` (store/proposal_record.ts has the format). Each change of a pending proposal
// (a claim, its release) is a publish that expects the subject's last sequence it read, so of two
// processes deciding one proposal exactly one does; a decision is written once (expecting an
// empty subject) and then the pending subject is purged up to what the decider saw.

import { NotFoundError, UnavailableError } from "../../store/errors.ts";
import type { Call, Claim, HeldProposal, Listed, ReviewOps } from "../../store/backend.ts";
import type { HistoryProblem, Proposal } from "../../store/types.ts";
import { decodeProposal, encodeProposal } from "../../store/proposal_record.ts";
import { quote } from "../../store/text.ts";
import { apiCode, type Deadline, isWrongLastSequence, STREAM_NOT_FOUND } from "./errors.ts";
import type { Handle } from "./handle.ts";
import { getMessage } from "./messages.ts";
import { readAll } from "./scan.ts";
import { publish, type WriteTarget } from "./write.ts";
import { streamInfo } from "./direct.ts";

/** The review stream of `bucket`. */
export function reviewStream(bucket: string): string {
  return `KVR_${bucket}`;
}

/** The subjects of `bucket`'s review stream. */
export function reviewSubjects(bucket: string): string {
  return `$KVR.${bucket}.>`;
}

// A change that lost a race re-reads and tries again at most this many times.
const MAX_ATTEMPTS = 8;

/** The review storage of a jetstream store handle, looking at keys with `head`. */
export function jetStreamReview(h: Handle, head: NonNullable<ReviewOps["head"]>): ReviewOps {
  return new JetStreamReview(h, head);
}

class JetStreamReview implements ReviewOps {
  readonly readBeforeUpdate: boolean;
  readonly head: NonNullable<ReviewOps["head"]>;
  readonly #h: Handle;
  readonly #stream: string;
  readonly #base: string;
  // Where proposals are written: the review stream, over the handle's connection.
  readonly #target: WriteTarget;
  readonly #queue = new QueueBound();
  #adding: Promise<void> = Promise.resolve();

  constructor(h: Handle, head: NonNullable<ReviewOps["head"]>) {
    this.#h = h;
    this.head = head;
    this.readBeforeUpdate = h.c.readBeforeUpdate;
    this.#stream = reviewStream(h.c.bucket);
    this.#base = `$KVR.${h.c.bucket}.${h.c.prefix === "" ? "~" : h.c.prefix}`;
    const { nc, js, jsm, headers } = h.c;
    this.#target = { stream: this.#stream, nc, js, jsm, headers };
  }

  count(call: Call): Promise<number> {
    return this.#h.run(
      { op: "create", key: undefined, call },
      async () => (await this.#h.count()).live,
    );
  }

  baseHint(key: string, call: Call): string | undefined {
    const seen = call.scope?.revision(this.#h.ns, key);
    return seen === undefined || seen <= 0 ? undefined : String(seen);
  }

  // A publish that holds only if nothing was written to the review stream since the bound was
  // taken keeps the count exact; a lost race counts afresh (see QueueBound).
  // This handle's adds go one at a time, so they never race each other for the bound.
  add(proposal: Proposal, limit: number, call: Call): Promise<boolean> {
    const turn = this.#adding.then(() => this.#add(proposal, limit, call));
    this.#adding = turn.then(() => {}, () => {});
    return turn;
  }

  #add(proposal: Proposal, limit: number, call: Call): Promise<boolean> {
    return this.#h.run({ op: "create", key: proposal.key, call }, async (d) => {
      const data = encodeProposal({ proposal });
      const subject = this.#subject("p", proposal.id);
      for (let attempt = 1;; attempt++) {
        let bound = this.#queue.usable() ?? await this.#count(d);
        // A bound is an upper bound: one at the limit is counted afresh before it refuses.
        if (bound.pending >= limit && !bound.counted) bound = await this.#count(d);
        if (bound.pending >= limit) return false;
        // After a few lost races the publish goes without the stream's sequence: proposals added
        // at once may then pass the limit by their number, as creates pass MAX_ENTRIES.
        const exact = attempt <= 3;
        try {
          const seq = await publish(this.#target, {
            subject,
            data,
            expect: { revision: 0, ...(exact ? { streamSeq: bound.seq } : {}) },
            headers: undefined,
            d,
          });
          this.#queue.added(bound, seq);
          return true;
        } catch (e) {
          if (!isWrongLastSequence(e)) throw e;
          // Without the stream's sequence, only a taken subject refuses: a random id met twice.
          if (!exact) {
            throw new UnavailableError(
              `[memory:jetstream] Cannot hold a write of memory ${
                quote(proposal.key)
              }: its proposal's id is taken; try again`,
              { key: proposal.key },
            );
          }
          this.#queue.forget();
        }
      }
    });
  }

  drop(id: string, call: Call): Promise<void> {
    return this.#h.run({ op: "delete", key: undefined, call }, async () => {
      for (const state of ["p", "d"] as const) {
        await this.#h.c.jsm.streams.purge(this.#stream, { filter: this.#subject(state, id) });
      }
    });
  }

  withdraw(id: string, call: Call): Promise<void> {
    return this.#h.run({ op: "create", key: undefined, call }, async () => {
      await this.#h.c.jsm.streams.purge(this.#stream, { filter: this.#subject("p", id) });
    });
  }

  // How many proposals are pending, at the review stream's last sequence read just before.
  async #count(d: Deadline): Promise<Bound> {
    const info = await streamInfo(this.#h.c, this.#stream);
    const seq = info.state.last_seq;
    const drained = await this.#drain(`${this.#base}.p.*`, d, () => {}, true);
    const bound = { pending: drained?.initial ?? 0, seq, counted: true };
    this.#queue.offer(bound);
    return bound;
  }

  get(id: string, call: Call) {
    return this.#h.run({ op: "read", key: undefined, call }, async () => {
      // The decision first: a pending record that a crash brought back never outlives it.
      const decided = await this.#last("d", id);
      if (decided !== undefined && typeof decided.held !== "string") {
        return { decided: decided.held.proposal };
      }
      const pending = await this.#last("p", id);
      if (pending !== undefined && typeof pending.held !== "string") return { held: pending.held };
      return undefined;
    });
  }

  list(
    which: "pending" | "decided",
    before: number | undefined,
    call: Call,
  ): Promise<Listed<HeldProposal>> {
    return this.#h.run({ op: "list", key: undefined, call }, async (d) => {
      const items: HeldProposal[] = [];
      const problems: HistoryProblem[] = [];
      const expired: { subject: string; seq: number }[] = [];
      const state = which === "pending" ? "p" : "d";
      const drained = await this.#drain(`${this.#base}.${state}.*`, d, (m) => {
        const id = m.subject.slice(m.subject.lastIndexOf(".") + 1);
        const held = decodeProposal(m.data, id);
        if (typeof held === "string") return void problems.push(damaged(id, held));
        const at = Date.parse(held.proposal.decision?.at ?? held.proposal.at);
        const claimed = held.claim !== undefined && before !== undefined && held.claim.at >= before;
        if (before !== undefined && at < before && !claimed) expired.push(m);
        else items.push(held);
      });
      if (drained === undefined) return { items, problems };
      for (const m of expired) {
        await this.#h.c.jsm.streams.purge(this.#stream, { filter: m.subject, seq: m.seq + 1 })
          .catch(() => {});
      }
      return { items, problems };
    });
  }

  claim(id: string, claim: Claim & { readonly takeOverBefore: number }, call: Call) {
    const { takeOverBefore, ...mine } = claim;
    return this.#change(id, call, (held) => {
      if (held.claim !== undefined && held.claim.at >= takeOverBefore) return undefined;
      return {
        next: { proposal: held.proposal, claim: mine },
        result: { proposal: held.proposal, previous: held.claim },
      };
    });
  }

  async release(id: string, claim: Claim, call: Call): Promise<void> {
    await this.#change(
      id,
      call,
      (held) =>
        held.claim?.token === claim.token
          ? { next: { proposal: held.proposal }, result: undefined }
          : { next: undefined, result: undefined },
    ).catch((e) => {
      if (!(e instanceof NotFoundError)) throw e;
    });
  }

  decide(id: string, claim: Claim, decided: Proposal, call: Call): Promise<void> {
    return this.#h.run({ op: "update", key: decided.key, call }, async (d) => {
      const pending = await this.#last("p", id);
      if (pending === undefined || typeof pending.held === "string") return;
      if (pending.held.claim?.token !== claim.token) {
        throw new NotFoundError(
          `[memory:jetstream] Cannot decide proposal ${quote(id)}: another operator took it over`,
          { key: decided.key },
        );
      }
      try {
        const data = encodeProposal({ proposal: decided });
        const seq = await publish(this.#target, {
          subject: this.#subject("d", id),
          data,
          expect: { revision: 0 },
          headers: undefined,
          d,
        });
        this.#queue.wrote(seq);
      } catch (e) {
        // Decided already (a taker finished it): that decision stands.
        if (!isWrongLastSequence(e)) throw e;
      }
      // Up to what this decider saw: a later claim, if any, stays and finds the decision.
      await this.#h.c.jsm.streams.purge(this.#stream, {
        filter: this.#subject("p", id),
        seq: pending.seq + 1,
      });
    });
  }

  // Changes a pending proposal: `step` sees it and says what it becomes (`undefined`: another
  // holds it). The publish expects the subject's last sequence it read.
  #change<T>(
    id: string,
    call: Call,
    step: (held: HeldProposal) => { next: HeldProposal | undefined; result: T } | undefined,
  ): Promise<T> {
    const gone = (why: string) =>
      new NotFoundError(`[memory:jetstream] Cannot decide proposal ${quote(id)}: ${why}`);
    return this.#h.run({ op: "update", key: undefined, call }, async (d) => {
      for (let attempt = 1;; attempt++) {
        const [decided, seen] = await Promise.all([this.#last("d", id), this.#last("p", id)]);
        if (decided !== undefined || seen === undefined || typeof seen.held === "string") {
          throw gone("no pending proposal has this id");
        }
        const done = step(seen.held);
        if (done === undefined) throw gone("another operator is deciding it");
        if (done.next === undefined) return done.result;
        try {
          const seq = await publish(this.#target, {
            subject: this.#subject("p", id),
            data: encodeProposal(done.next),
            expect: { revision: seen.seq },
            headers: undefined,
            d,
          });
          this.#queue.wrote(seq);
          return done.result;
        } catch (e) {
          if (!isWrongLastSequence(e)) throw e;
        }
        if (attempt >= MAX_ATTEMPTS || d.cancelled) throw gone("another operator is deciding it");
      }
    });
  }

  // The last record on a proposal's subject: its sequence, and the record or why it is none.
  async #last(
    state: "p" | "d",
    id: string,
  ): Promise<{ seq: number; held: HeldProposal | string } | undefined> {
    let m;
    try {
      m = await getMessage(this.#h.c, {
        stream: this.#stream,
        last_by_subj: this.#subject(state, id),
      });
    } catch (e) {
      if (apiCode(e) === STREAM_NOT_FOUND) return undefined;
      throw e;
    }
    if (m === null) return undefined;
    return { seq: m.seq, held: decodeProposal(m.data, id) };
  }

  // Every proposal subject's last message under `filter`; `undefined` when the bucket has no
  // review stream (it holds none then).
  async #drain(
    filter: string,
    d: Deadline,
    onMessage: (m: { subject: string; seq: number; data: Uint8Array }) => void,
    countOnly = false,
  ) {
    try {
      return await readAll(this.#h.c, {
        stream: this.#stream,
        filter,
        d,
        lastPerSubject: true,
        headersOnly: countOnly,
        ...(countOnly ? { enough: () => true } : {}),
        onMessage,
      });
    } catch (e) {
      if (apiCode(e) === STREAM_NOT_FOUND) return undefined;
      throw e;
    }
  }

  #subject(state: "p" | "d", id: string): string {
    return `${this.#base}.${state}.${id}`;
  }
}

/** At most `pending` proposals were pending when the review stream's last sequence was `seq`. */
interface Bound {
  readonly pending: number;
  readonly seq: number;
  /** Whether it is a count (exact then), not a count moved past later writes. */
  readonly counted?: boolean;
}

/**
 * One handle's bound on the pending proposals, as capacity.ts keeps one on live keys: a message
 * of the review stream adds at most one pending proposal (a claim, release or decision adds
 * none), so at most `pending + (S - seq)` are pending at a later sequence S, and a publish that
 * expects the stream's last sequence to be `seq` holds only if the bound does.
 */
class QueueBound {
  #bound: Bound | undefined;

  usable(): Bound | undefined {
    return this.#bound;
  }

  offer(b: Bound): void {
    if (this.#bound === undefined || b.seq >= this.#bound.seq) this.#bound = b;
  }

  /** This handle's proposal landed at `seq`, right after the bound's sequence or later. */
  added(from: Bound, seq: number): void {
    this.#bound = { pending: from.pending + (seq - from.seq), seq };
  }

  /**
   * This handle wrote a message that adds no pending proposal (a claim, its release, a decision)
   * at `seq`: each message between the bound's sequence and it may have added one. So a handle
   * that decides holds its next write without counting again.
   */
  wrote(seq: number): void {
    const b = this.#bound;
    if (b !== undefined && seq > b.seq) {
      this.#bound = { pending: b.pending + (seq - b.seq - 1), seq };
    }
  }

  forget(): void {
    this.#bound = undefined;
  }
}

function damaged(id: string, why: string): HistoryProblem {
  return {
    key: `(proposal ${id})`,
    problem: "damaged",
    reason: `The review record of proposal ${id} cannot be read: ${why}`,
  };
}
