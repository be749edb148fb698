// What `agentmem check` finds wrong in one key's history as the two streams hold it, without an
// anchor: a version edited, out of its place, missing from the middle, or rolled back to; a cut
// no retention record explains; a memory gone without a delete version; a write around the
// library (a raw put or delete); a record that cannot be read; something foreign in its history.

import { GENESIS } from "../../store/chain.ts";
import type { HistoryProblem, HistoryProblemKind } from "../../store/types.ts";
import type { KeyState, Packed } from "./pack.ts";
import { hashMatches } from "./provenance.ts";

/** One key's history, as read from both streams. */
export interface KeyHistory {
  /** The key under the store's prefix. */
  readonly key: string;
  /** The chain name: the bucket key. */
  readonly name: string;
  /** Every version both streams hold, by revision (raw writes included: they are no versions). */
  readonly items: readonly Packed[];
  /** What the key's last message in the history stream says. */
  readonly state: KeyState;
  /** Whether the key's subject in the bucket held nothing. */
  readonly empty: boolean;
  /** History messages that could not be read (their reasons), or that this library never writes. */
  readonly damaged: readonly string[];
  readonly foreign: readonly string[];
  /** How many versions of chain format 1 it holds, and whether times came from writers' clocks. */
  readonly format1: number;
  readonly writerTimes: boolean;
}

/** The items of `h` the chain still holds: those above its retention record. */
export function heldItems(h: KeyHistory): Packed[] {
  const cut = h.state.cut?.rev ?? 0;
  return h.items.filter((v) => v.rev > cut);
}

/** Every problem in `h`, in revision order. */
export function verifyKey(h: KeyHistory): HistoryProblem[] {
  const problems: HistoryProblem[] = [];
  const problem = (kind: HistoryProblemKind, why: string | { reason: string; at: number }) => {
    const [reason, revision] = typeof why === "string" ? [why, undefined] : [why.reason, why.at];
    problems.push({
      key: h.key,
      ...(revision === undefined ? {} : { revision: String(revision) }),
      problem: kind,
      reason,
    });
  };
  for (const reason of h.damaged) problem("damaged", reason);
  for (const reason of h.foreign) problem("foreign", reason);
  const items = heldItems(h);
  const cut = h.state.cut;
  // With a history record lost to damage, the links around it cannot be judged.
  let gap = h.damaged.length > 0;
  let prev: Packed | undefined;
  let rawMarker = false;
  let maxSeq = 0;
  const newestRev = items.findLast((v) => v.record !== undefined)?.rev;
  for (const v of items) {
    if (v.damaged !== undefined) {
      problem("damaged", { reason: `its record: ${v.damaged}`, at: v.rev });
      gap = true;
      continue;
    }
    const r = v.record;
    if (r === undefined) {
      // Before the first version, an entry written before history was on; after, a raw write.
      if (prev !== undefined) {
        problem("unrecorded", {
          reason: v.marker
            ? "a delete no version records (a raw KV delete, made around the library)"
            : "an entry no version records (a raw KV put, made around the library, or a write with history off)",
          at: v.rev,
        });
      }
      rawMarker ||= v.marker;
      continue;
    }
    if (!hashMatches(r, { name: h.name, entry: v.redacted ?? v.entry })) {
      problem("edited", {
        reason: "the version's bytes do not match its hash (edited by hand?)",
        at: v.rev,
      });
    }
    const seq = r.seq ?? 0;
    const p = prev?.record;
    if (p === undefined) {
      const first = r.format === 1 || (seq === 1 && r.prev === GENESIS) ||
        (cut !== undefined && r.prev === cut.hash && (seq === cut.seq + 1 || cut.seq === 0)) ||
        (seq === 1 && cut === undefined && h.format1 > 0);
      if (!first && !gap) {
        problem("truncated", {
          reason:
            `its oldest kept version is place ${seq} of its chain, and no retention record explains the ${
              seq - 1
            } before it (removed from the history stream?)`,
          at: v.rev,
        });
      }
    } else if (r.format === 1) {
      const lenient = r.op === "create" && r.prev === GENESIS;
      if (r.prev !== p.hash && !lenient && !gap) {
        problem("missing", {
          reason: `it does not chain to version ${prev!.rev} before it`,
          at: v.rev,
        });
      }
    } else if (p.format === 1) {
      if ((seq !== 1 || r.prev !== p.hash) && !gap) {
        problem("missing", {
          reason: `it does not chain to version ${prev!.rev} before it`,
          at: v.rev,
        });
      }
    } else if (seq <= (p.seq ?? 0)) {
      if (v.rev === newestRev && seq < maxSeq) {
        problem("rolled_back", {
          reason:
            `the memory holds place ${seq} of its chain again, after place ${maxSeq} was written`,
          at: v.rev,
        });
      } else {problem("edited", {
          reason: `it claims place ${seq}, at or before the version before it`,
          at: v.rev,
        });}
    } else if (seq > (p.seq ?? 0) + 1) {
      if (!gap) {
        problem("missing", {
          reason: `places ${(p.seq ?? 0) + 1} to ${seq - 1} of its chain are missing before it`,
          at: v.rev,
        });
      }
    } else if (r.prev !== p.hash && !gap) {
      problem("missing", {
        reason: `it does not chain to version ${prev!.rev} before it`,
        at: v.rev,
      });
    }
    if (r.op === "create" && p !== undefined && p.op !== "delete" && !rawMarker) {
      problem("removed", {
        reason: `created again after version ${
          prev!.rev
        }, which no delete version follows (the memory was removed by hand?)`,
        at: v.rev,
      });
    }
    prev = v;
    maxSeq = Math.max(maxSeq, seq);
    gap = false;
    rawMarker = false;
  }
  // A subject emptied without a delete: the memory is gone, and nothing says it was deleted.
  const last = items.at(-1);
  if (h.empty && prev !== undefined && prev.record!.op !== "delete" && !last?.marker) {
    problem("removed", {
      reason:
        `the memory is gone, and its newest version ${prev.rev} is no delete (its subject was purged by hand?)`,
      at: prev.rev,
    });
  }
  return problems;
}
