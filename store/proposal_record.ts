// How a proposal (a write held for review) is stored, one format for every backend: a JSON object
// `{ format, proposal, claim? }`, the proposal with its body while pending, without it once
// decided. A record is read back strictly: what a writer of this library could not have written
// (a hand edit, a forged message) is refused with the reason, never half-trusted.

import { PROVENANCE_ID } from "./scope.ts";
import { CALL_ID_PATTERN, VIA_PATTERN } from "./chain.ts";
import { validateKey } from "./validate.ts";
import type { Claim, HeldProposal } from "./backend.ts";
import type { Proposal, ProposalDecision } from "./types.ts";
import { randomHex } from "./random.ts";

/** The record format this library writes. */
export const PROPOSAL_FORMAT = 1;

/** A proposal id: 16 lowercase hexadecimal characters. */
export const PROPOSAL_ID = /^[0-9a-f]{16}$/;

const REVISION = /^[1-9][0-9]{0,15}$/;
const OPS: ReadonlySet<unknown> = new Set(["create", "update", "delete"]);
const ENCODER = new TextEncoder();
const DECODER = new TextDecoder("utf-8", { fatal: true });

/** A new random proposal id. */
export function newProposalId(): string {
  return randomHex(8);
}

/** The bytes of a record. */
export function encodeProposal(held: HeldProposal): Uint8Array {
  const record = { format: PROPOSAL_FORMAT, proposal: held.proposal, claim: held.claim };
  return ENCODER.encode(JSON.stringify(record));
}

/**
 * The record `bytes` hold, checked against the id it is stored under (`undefined`: any), or the
 * reason it is none.
 */
export function decodeProposal(bytes: Uint8Array, id: string | undefined): HeldProposal | string {
  let record: unknown;
  try {
    record = JSON.parse(DECODER.decode(bytes));
  } catch {
    return "it is not a JSON record";
  }
  if (!isObject(record) || record.format !== PROPOSAL_FORMAT) {
    return `it is no proposal record of format ${PROPOSAL_FORMAT}`;
  }
  const proposal = checkProposal(record.proposal);
  if (typeof proposal === "string") return proposal;
  if (id !== undefined && proposal.id !== id) return `it names another id (${proposal.id})`;
  if (record.claim === undefined) return { proposal };
  const claim = checkClaim(record.claim);
  return typeof claim === "string" ? claim : { proposal, claim };
}

function checkProposal(p: unknown): Proposal | string {
  if (!isObject(p)) return "its proposal is not an object";
  if (typeof p.id !== "string" || !PROPOSAL_ID.test(p.id)) return "its id is malformed";
  try {
    validateKey(p.key);
  } catch {
    return "its key is not a legal key";
  }
  if (!OPS.has(p.op)) return "its op is none of create, update, delete";
  for (const field of ["description", "content"] as const) {
    if (p[field] !== undefined && typeof p[field] !== "string") return `its ${field} is no text`;
  }
  if (p.op !== "delete" && typeof p.description !== "string") return "it has no description";
  if (p.base !== undefined && (typeof p.base !== "string" || !REVISION.test(p.base))) {
    return "its base is no revision";
  }
  for (const field of ["run", "actor"] as const) {
    const v = p[field];
    if (v !== undefined && (typeof v !== "string" || !PROVENANCE_ID.test(v))) {
      return `its ${field} is malformed`;
    }
  }
  if (typeof p.via !== "string" || !VIA_PATTERN.test(p.via)) return "its via is malformed";
  if (p.callId !== undefined && (typeof p.callId !== "string" || !CALL_ID_PATTERN.test(p.callId))) {
    return "its callId is malformed";
  }
  if (typeof p.tainted !== "boolean") return "its tainted is no boolean";
  if (!isTime(p.at)) return "its at is no time";
  if (p.decision !== undefined) {
    const why = checkDecision(p.decision);
    if (why !== undefined) return why;
  }
  const fields = [
    "id",
    "key",
    "op",
    "description",
    "content",
    "base",
    "run",
    "actor",
    "via",
    "callId",
    "tainted",
    "at",
    "decision",
  ];
  const extra = Object.keys(p).find((k) => !fields.includes(k));
  if (extra !== undefined) return `it has an unknown field (${JSON.stringify(extra.slice(0, 32))})`;
  return p as unknown as Proposal;
}

function checkDecision(d: unknown): string | undefined {
  if (!isObject(d)) return "its decision is not an object";
  if (d.outcome !== "approved" && d.outcome !== "rejected") return "its decision has no outcome";
  if (!isTime(d.at)) return "its decision's at is no time";
  if (d.actor !== undefined && (typeof d.actor !== "string" || !PROVENANCE_ID.test(d.actor))) {
    return "its decision's actor is malformed";
  }
  if (d.reason !== undefined && typeof d.reason !== "string") return "its reason is no text";
  if (d.revision !== undefined && (typeof d.revision !== "string" || !REVISION.test(d.revision))) {
    return "its decision's revision is no revision";
  }
  if (d.forced !== undefined && typeof d.forced !== "boolean") return "its forced is no boolean";
  return undefined;
}

function checkClaim(c: unknown): Claim | string {
  if (!isObject(c)) return "its claim is not an object";
  if (typeof c.token !== "string" || !/^[0-9a-f]{16}$/.test(c.token)) {
    return "its claim is malformed";
  }
  if (typeof c.at !== "number" || !Number.isSafeInteger(c.at)) return "its claim has no time";
  if (c.expected !== null && (typeof c.expected !== "string" || !REVISION.test(c.expected))) {
    return "its claim's revision is malformed";
  }
  if (c.actor !== undefined && (typeof c.actor !== "string" || !PROVENANCE_ID.test(c.actor))) {
    return "its claim's actor is malformed";
  }
  return c as unknown as Claim;
}

/** `proposal` as a decided record keeps it: without its body, with `decision`. */
export function decided(proposal: Proposal, decision: ProposalDecision): Proposal {
  const { content: _content, decision: _old, ...rest } = proposal;
  return { ...rest, decision };
}

function isTime(v: unknown): boolean {
  return typeof v === "string" && !Number.isNaN(Date.parse(v));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
