// The review queue (store option `review`): the writes held for an operator, each with the diff of
// what approving it writes over the memory's current text, and its approval or rejection (a POST
// from that page, which carries the memory's newest revision it showed: if the memory moved since,
// nothing is decided and the page is shown again as it stands).

import type { Context } from "hono";
import {
  approveProposal,
  history,
  MemoryError,
  NotFoundError,
  type Proposal,
  proposals,
  readVersion,
  rejectProposal,
  type Version,
} from "../../mod.ts";
import {
  changeForm,
  type Console,
  csrfField,
  failurePage,
  operatorScope,
  render,
} from "./_context.ts";
import { diffView, type Side } from "./_diff.ts";
import {
  grid,
  type Html,
  html,
  keyLink,
  notice,
  runLink,
  seg,
  skipped,
  taintMark,
  text,
  when,
} from "./_html.ts";

const STATUSES = ["pending", "decided", "all"] as const;

function decision(p: Proposal): Html | string {
  const d = p.decision;
  if (d === undefined) return "pending";
  const by = d.actor === undefined ? "" : ` by ${d.actor}`;
  const why = d.reason === undefined ? "" : `: ${d.reason}`;
  return html`${d.outcome}${d.forced ? " (forced)" : ""} at ${when(d.at)}${text(by + why)}`;
}

/** `GET /review?status=`: the queue. */
export async function reviewPage(c: Context, con: Console) {
  const asked = c.req.query("status") ?? "pending";
  const status = (STATUSES as readonly string[]).includes(asked)
    ? asked as typeof STATUSES[number]
    : "pending";
  try {
    const list = await proposals(con.store, { status });
    const tabs = html`<p class="tabs">${
      STATUSES.map((s, i) =>
        html`${i === 0 ? "" : " · "}${
          s === status ? html`<b>${s}</b>` : html`<a href="/review?status=${s}">${s}</a>`
        }`
      )
    }</p>`;
    const rows = list.map((p) => [
      html`<a href="/review/${seg(p.id)}">${p.id}</a>`,
      keyLink(p.key),
      p.op,
      text(p.description ?? ""),
      runLink(p.run),
      text(p.actor ?? ""),
      text(p.via),
      taintMark(p.tainted),
      when(p.at),
      decision(p),
    ]);
    return render(
      c,
      con,
      "Review queue",
      html`<p>Writes held for an operator (store option <code>review</code>): no run sees them until one is approved. Oldest first.</p>${tabs}${
        skipped(list.problems)
      }${
        list.length === 0
          ? notice("info", html`No ${status === "all" ? "" : `${status} `}proposal.`)
          : grid(
            [
              "id",
              "key",
              "write",
              "description",
              "run",
              "actor",
              "via",
              "taint",
              "proposed",
              "status",
            ],
            rows,
          )
      }`,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}

async function find(con: Console, id: string): Promise<Proposal> {
  const p = (await proposals(con.store, { status: "all" })).find((x) => x.id === id);
  if (p === undefined) {
    throw new NotFoundError(`Cannot show proposal ${JSON.stringify(id)}: no proposal has that id`);
  }
  return p;
}

async function nowSide(con: Console, key: string, head: Version | undefined): Promise<Side> {
  if (head === undefined || head.op === "delete") {
    return { title: "now (nothing)", description: undefined, content: undefined };
  }
  const e = await readVersion(con.store, key, head.revision);
  return {
    title: `now (revision ${head.revision})`,
    description: e.description,
    content: e.content,
  };
}

async function proposalView(con: Console, p: Proposal, why: Html | undefined) {
  const [head] = await history(con.store, p.key);
  const moved = (head?.op === "delete" ? undefined : head?.revision) !== p.base;
  const after: Side = p.op === "delete"
    ? { title: "after: deleted", description: undefined, content: undefined }
    : { title: "after approval", description: p.description, content: p.content };
  const meta = grid(
    ["write", "run", "actor", "via", "call id", "taint", "proposed", "made against", "status"],
    [[
      p.op,
      runLink(p.run),
      text(p.actor ?? ""),
      text(p.via),
      text(p.callId ?? ""),
      taintMark(p.tainted),
      when(p.at),
      p.base === undefined ? "nothing (a create)" : `revision ${p.base}`,
      decision(p),
    ]],
  );
  const pending = p.decision === undefined;
  const forms = !pending ? "" : !con.chrome.writable
    ? notice(
      "warn",
      html`This console is read-only: start it with <code>--write</code> to approve or reject.`,
    )
    : html`<form method="post" action="/review/${seg(p.id)}/approve">${csrfField(con)}
<input type="hidden" name="head" value="${head?.revision ?? "-"}">
${
      moved
        ? html`
          <label><input type="checkbox" name="force" value="1"> approve over the change made since (force)</label>
        `
        : ""
    }<button type="submit" class="danger">Approve: ${p.op} ${text(p.key)}</button></form>
<form method="post" action="/review/${seg(p.id)}/reject">${csrfField(con)}
<label>Reason <input type="text" name="reason" maxlength="500" placeholder="why it is rejected"></label>
<button type="submit">Reject</button></form>`;
  return html`${why ?? ""}${meta}${
    moved && pending
      ? notice(
        "warn",
        html`${keyLink(p.key)} changed after this was proposed (it is now ${
          head === undefined ? "nothing" : `revision ${head.revision}`
        }): approving needs force, and writes over that change.`,
      )
      : ""
  }<h2>What approving writes</h2>${diffView(await nowSide(con, p.key, head), after)}${forms}`;
}

/** `GET /review/:id`: one proposal, the diff against the current text, approve and reject. */
export async function proposalPage(c: Context, con: Console) {
  const id = c.req.param("id")!;
  try {
    const p = await find(con, id);
    return render(
      c,
      con,
      `Proposal ${id}: ${p.op} ${p.key}`,
      await proposalView(con, p, undefined),
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}

/** `POST /review/:id/approve`. */
export async function approvePost(c: Context, con: Console) {
  const id = c.req.param("id")!;
  const form = await changeForm(c, con);
  if (form instanceof Response) return form;
  try {
    const p = await find(con, id);
    const [head] = await history(con.store, p.key);
    if ((head?.revision ?? "-") !== form.head) {
      return render(
        c,
        con,
        `Proposal ${id}: ${p.op} ${p.key}`,
        await proposalView(
          con,
          p,
          notice(
            "warn",
            html`The memory changed after the page you confirmed on; nothing was decided. Here it is as it stands now.`,
          ),
        ),
        409,
      );
    }
    const decided = await approveProposal(con.store, id, {
      force: form.force === "1",
      scope: operatorScope(),
    });
    con.index.wrote([p.key]);
    con.log(`approved proposal ${id}: ${p.op} ${p.key}`);
    return render(
      c,
      con,
      `Approved ${p.op} of ${p.key}`,
      html`${
        notice(
          "info",
          html`Approved: ${p.op} ${keyLink(p.key)}${
            decided.decision?.revision === undefined
              ? ""
              : html`, now revision ${decided.decision.revision}`
          }.`,
        )
      }<p><a href="/review">Back to the queue</a> · <a href="/memory/${
        seg(p.key)
      }">the memory</a></p>`,
    );
  } catch (e) {
    if (e instanceof MemoryError && e.code === "stale") {
      const p = await find(con, id).catch(() => undefined);
      if (p !== undefined) {
        return render(
          c,
          con,
          `Proposal ${id}: ${p.op} ${p.key}`,
          await proposalView(con, p, notice("warn", html`${e.message}`)),
          409,
        );
      }
    }
    return failurePage(c, con, e);
  }
}

/** `POST /review/:id/reject`. */
export async function rejectPost(c: Context, con: Console) {
  const id = c.req.param("id")!;
  const form = await changeForm(c, con);
  if (form instanceof Response) return form;
  try {
    const reason = typeof form.reason === "string" && form.reason.trim() !== ""
      ? form.reason.trim()
      : undefined;
    const decided = await rejectProposal(con.store, id, { reason, scope: operatorScope() });
    con.log(`rejected proposal ${id}: ${decided.op} ${decided.key}`);
    return render(
      c,
      con,
      `Rejected ${decided.op} of ${decided.key}`,
      html`${
        notice("info", html`Rejected: ${decided.op} ${keyLink(decided.key)}; nothing was written.`)
      }
<p><a href="/review">Back to the queue</a></p>`,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}

/** How many proposals wait, for the overview (`undefined` when the store keeps no history). */
export async function pendingCount(con: Console): Promise<number | undefined> {
  try {
    return (await proposals(con.store)).length;
  } catch (e) {
    if (e instanceof MemoryError && e.code === "config") return undefined;
    throw e;
  }
}
