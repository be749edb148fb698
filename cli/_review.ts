// The review commands, for writes a store held (option `review`): list them (`review`), see one
// against what the memory holds now (`review show`), decide (`approve`, `reject`). Decisions are
// the operator's: recorded under the actor "operator", as the CLI's other writes are.

import { structuredPatch } from "diff";
import {
  approveProposal,
  NotFoundError,
  type Proposal,
  type ProposalFilter,
  proposals,
  rejectProposal,
  Scope,
  type Store,
  type Version,
} from "../mod.ts";
import { out, plural, quoted, safeJson, show, showBody } from "./_output.ts";
import type { Command, Context } from "./_spec.ts";

const ID = /^[0-9a-f]{16}$/;

function operatorScope(): Scope {
  return new Scope({ actor: "operator" });
}

/** Who proposed `p`, in one line. */
export function proposerText(p: Proposal): string {
  return [
    p.run === undefined ? "no run" : `run ${p.run}`,
    ...(p.actor === undefined ? [] : [`actor ${p.actor}`]),
    `via ${p.via}`,
    ...(p.callId === undefined ? [] : [`call ${p.callId}`]),
    ...(p.tainted ? ["TAINTED"] : []),
  ].join(", ");
}

/** A decided proposal as `log` and `history` show it beside the versions. */
export function decisionLine(p: Proposal, withKey: boolean): string {
  const d = p.decision!;
  const by = d.actor === undefined ? "" : ` by ${d.actor}`;
  const what = d.outcome === "approved"
    ? `approved${d.revision === undefined ? "" : ` as revision ${d.revision}`}${
      d.forced ? " (forced)" : ""
    }`
    : `rejected${d.reason === undefined ? "" : `: ${quoted(d.reason)}`}`;
  return `${withKey ? `${p.key}\t` : ""}-\t${d.at}\t${p.op} proposal ${p.id} ${what}${by} ` +
    `(proposed ${p.at}, ${show(proposerText(p))})`;
}

/** The decided proposals `log` and `history` show, for a key or a run; none without review. */
export async function decisionsOf(
  store: Store,
  filter: Pick<ProposalFilter, "key" | "run">,
): Promise<Proposal[]> {
  return await proposals(store, {
    ...(filter.key === undefined ? {} : { key: filter.key }),
    ...(filter.run === undefined ? {} : { run: filter.run }),
    status: "decided",
  });
}

export const reviewCommand: Command = {
  name: "review",
  summary: "the writes held for review (store option review), oldest first",
  about:
    'A store opened with review: "tainted" holds the writes of runs that read untrusted input, and review: "all" every write made through a scope; they apply only once approved. Each line: the id, when, what it would do, who proposed it. See one with review show <id>; decide with approve or reject.',
  options: {
    key: { kind: "string", value: "<key>", help: "only proposals for this key" },
    run: { kind: "string", value: "<id>", help: "only proposals of this run" },
    decided: { kind: "boolean", help: "the decided ones (approved or rejected) instead" },
  },
  reach: "store",
  examples: ["agentmem review --dir ./.agentmem", "agentmem review --json --dir ./.agentmem"],
  alias: ["proposals", "queue"],
  run: async (ctx) => {
    const { store } = await ctx.open();
    const filter: ProposalFilter = {
      ...(ctx.str("key") === undefined ? {} : { key: ctx.str("key") }),
      ...(ctx.str("run") === undefined ? {} : { run: ctx.str("run") }),
      status: ctx.flag("decided") ? "decided" : "pending",
    };
    const found = await proposals(store, filter);
    if (ctx.json) {
      out(safeJson({ proposals: found, problems: found.problems }));
      return 0;
    }
    const what = ctx.flag("decided") ? "decided" : "pending";
    if (found.length === 0) out(`(no proposals ${what})`);
    else out(`${plural(found.length, "proposal", "proposals")} ${what}, oldest first`);
    for (const p of found) {
      const description = p.description === undefined ? "" : `  ${show(p.description)}`;
      const decision = p.decision === undefined ? "" : `  ${p.decision.outcome} ${p.decision.at}`;
      out(`${p.id}\t${p.at}\t${p.op} ${p.key}\t${show(proposerText(p))}${description}${decision}`);
    }
    for (const problem of found.problems) out(`skipped: ${show(problem.reason)}`);
    if (!ctx.flag("decided") && found.length > 0) {
      out(`see one: ${ctx.again("review show <id>")}; decide: approve <id> or reject <id>`);
    }
    return 0;
  },
};

export const reviewShowCommand: Command = {
  name: "review show",
  summary: "one proposal: who proposed it, and a diff against what the memory holds now",
  args: [{ name: "id" }],
  reach: "store",
  examples: ["agentmem review show <id> --dir ./.agentmem"],
  run: async (ctx) => {
    const { store } = await ctx.open();
    const p = await find(store, ctx.args[0]!, "show");
    const now = await store.read(p.key).catch((e) => {
      if (e instanceof NotFoundError) return undefined;
      throw e;
    });
    if (ctx.json) {
      out(safeJson({ proposal: p, current: now ?? null }));
      return 0;
    }
    out(`proposal ${p.id}: ${p.op} ${p.key}`);
    out(`proposed ${p.at} by ${show(proposerText(p))}`);
    out(
      `made against ${
        p.base === undefined ? "no version (the key held nothing)" : `revision ${p.base}`
      }`,
    );
    if (p.decision !== undefined) {
      out(decisionLine(p, false).split("\t").slice(2).join(" "));
      return 0;
    }
    out("");
    out(diffText(now, p));
    return 0;
  },
};

export const approveCommand: Command = {
  name: "approve",
  summary:
    "write a held proposal as an ordinary write (via review); refused as stale if the memory changed since, unless --force",
  args: [{ name: "id" }],
  options: {
    force: {
      kind: "boolean",
      help: "write it even though the memory changed since it was proposed",
    },
  },
  reach: "store",
  writes: "always",
  examples: ["agentmem approve <id> --dir ./.agentmem"],
  alias: ["accept"],
  run: async (ctx) => {
    const id = checkId(ctx.args[0]!, "approve");
    const { store } = await ctx.open();
    const done = await approveProposal(store, id, {
      force: ctx.flag("force"),
      scope: operatorScope(),
    });
    report(ctx, done);
    return 0;
  },
};

export const rejectCommand: Command = {
  name: "reject",
  summary: "decide a held proposal against: nothing is written to the memory",
  args: [{ name: "id" }],
  options: {
    reason: { kind: "string", value: "<text>", help: "why, in a line, kept with the decision" },
  },
  reach: "store",
  writes: "always",
  examples: ['agentmem reject <id> --reason "mail redirection" --dir ./.agentmem'],
  alias: ["deny", "decline"],
  run: async (ctx) => {
    const id = checkId(ctx.args[0]!, "reject");
    const reason = ctx.str("reason");
    const { store } = await ctx.open();
    const done = await rejectProposal(store, id, {
      ...(reason === undefined ? {} : { reason }),
      scope: operatorScope(),
    });
    report(ctx, done);
    return 0;
  },
};

function report(ctx: Context, p: Proposal): void {
  const d = p.decision!;
  if (ctx.json) {
    out(safeJson({ id: p.id, key: p.key, op: p.op, ...d }));
    return;
  }
  out(
    d.outcome === "approved"
      ? `approved ${p.id}: ${p.op} ${p.key}${
        d.revision === undefined ? " (nothing left to delete)" : ` (now revision ${d.revision})`
      }${d.forced ? ", forced over a change made since it was proposed" : ""}`
      : `rejected ${p.id}: ${p.op} ${p.key}, nothing written`,
  );
}

// A malformed id is refused before the store is opened.
function checkId(id: string, verb: string): string {
  if (!ID.test(id)) {
    throw new NotFoundError(
      `Cannot ${verb} proposal ${
        quoted(id)
      }: no proposal has this id (an id is 16 lowercase hexadecimal characters, as agentmem review lists it)`,
    );
  }
  return id;
}

async function find(store: Store, id: string, verb: string): Promise<Proposal> {
  checkId(id, verb);
  const p = (await proposals(store, { status: "all" })).find((x) => x.id === id);
  if (p === undefined) {
    throw new NotFoundError(`Cannot ${verb} proposal ${quoted(id)}: no proposal has this id`);
  }
  return p;
}

// What the proposal would change: the description's line, then the body's hunks (three lines of
// context), every line shown as data.
function diffText(
  now: { description: string; content: string } | undefined,
  p: Proposal,
): string {
  const lines: string[] = [];
  const from = now === undefined ? "(nothing: the key holds no memory)" : "now";
  const to = p.op === "delete" ? "(deleted)" : "proposed";
  lines.push(`--- ${from}`, `+++ ${to}`);
  if (now?.description !== p.description) {
    if (now !== undefined) lines.push(`-description: ${show(now.description)}`);
    if (p.description !== undefined) lines.push(`+description: ${show(p.description)}`);
  } else lines.push(` description: ${show(p.description ?? "")} (unchanged)`);
  const patch = structuredPatch("", "", now?.content ?? "", p.content ?? "", undefined, undefined, {
    context: 3,
  });
  if (patch.hunks.length === 0) lines.push("(the body is unchanged)");
  for (const h of patch.hunks) {
    lines.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`);
    for (const line of h.lines) lines.push(showBody(line).replaceAll("\n", "\\n"));
  }
  return lines.join("\n");
}

/** A version or a decided proposal, as `log` and `history` list them. */
export type Event =
  | { readonly kind: "version"; readonly at: string; readonly version: Version }
  | { readonly kind: "decision"; readonly at: string; readonly proposal: Proposal };

/**
 * `versions` (in their order) and `decisions` together, oldest first: a decision goes after every
 * version written before it was made.
 */
export function events(versions: readonly Version[], decisions: readonly Proposal[]): Event[] {
  const out: Event[] = versions.map((version) => ({ kind: "version", at: version.at, version }));
  const ds = [...decisions].sort((a, b) => Date.parse(a.decision!.at) - Date.parse(b.decision!.at));
  for (const proposal of ds) {
    const at = Date.parse(proposal.decision!.at);
    let i = out.length;
    while (i > 0 && Date.parse(out[i - 1]!.at) > at) i--;
    out.splice(i, 0, { kind: "decision", at: proposal.decision!.at, proposal });
  }
  return out;
}

/** The line of an event; a version an approval wrote names its proposal. */
export function eventLine(
  e: Event,
  decisions: readonly Proposal[],
  versionLine: (v: Version) => string,
  withKey: boolean,
): string {
  if (e.kind === "decision") return decisionLine(e.proposal, withKey);
  const v = e.version;
  const approved = v.via !== "review"
    ? undefined
    : decisions.find((p) => p.key === v.key && p.decision?.revision === v.revision);
  return versionLine(v) + (approved === undefined ? "" : `  (approved proposal ${approved.id})`);
}
