// A run's revert: first a dry run (`revertRun(..., { dryRun: true })`) shown per key as what will
// happen and the diff of exactly what changes, then a POST that carries the plan it confirmed (each
// key's newest revision): if the store moved meanwhile, nothing is written and the new plan is shown.

import type { Context } from "hono";
import { history, readVersion, type RevertAction, revertRun, type Version } from "../../mod.ts";
import {
  changeForm,
  type Console,
  csrfField,
  failurePage,
  operatorScope,
  render,
} from "./_context.ts";
import { diffView, type Side } from "./_diff.ts";
import { type Html, html, keyLink, notice, plural, runLink, seg, text } from "./_html.ts";

/** What the revert does to one key (the library's own plan), with the key's newest version. */
export interface KeyPlan extends RevertAction {
  readonly head: Version;
}

/** A revert's dry run, per key. */
export interface Plan {
  readonly keys: KeyPlan[];
  /** Keys the run wrote that already hold what they held before it. */
  readonly already: readonly string[];
  readonly conflicts: { readonly key: string; readonly reason: string }[];
  /** Every key's newest revision, which the confirmation carries. */
  readonly fingerprint: string;
}

async function headOf(con: Console, key: string): Promise<Version | undefined> {
  return (await history(con.store, key))[0];
}

/** The dry run of reverting `run`: `revertRun`'s per-key actions, with each key's head now. */
export async function planRevert(con: Console, run: string): Promise<Plan> {
  const dry = await revertRun(con.store, run, { dryRun: true });
  const keys: KeyPlan[] = [];
  const heads: string[] = [];
  for (const action of dry.actions) {
    const head = await headOf(con, action.key);
    if (head === undefined) continue; // pruned meanwhile: the revert will say so
    heads.push(`${action.key}@${head.revision}`);
    keys.push({ ...action, head });
  }
  for (const { key } of dry.conflicts) {
    heads.push(`${key}@${(await headOf(con, key))?.revision ?? "-"}`);
  }
  return {
    keys,
    already: dry.already,
    conflicts: dry.conflicts,
    fingerprint: heads.sort().join(" "),
  };
}

// The text `revision` holds (none: `undefined`, a deleted memory).
async function textAt(
  con: Console,
  key: string,
  revision: string | undefined,
  title: string,
): Promise<Side> {
  if (revision === undefined) return { title, description: undefined, content: undefined };
  const e = await readVersion(con.store, key, revision);
  return { title, description: e.description, content: e.content };
}

function what(k: RevertAction): Html {
  switch (k.action) {
    case "deleted":
      return html`deleted (the run created it)`;
    case "restored":
      return html`restored to revision ${k.revision ?? "?"}`;
    default:
      return html`re-created as revision ${k.revision ?? "?"} held (the run deleted it)`;
  }
}

async function planView(con: Console, run: string, plan: Plan): Promise<Html> {
  const rows = await Promise.all(plan.keys.map(async (k) => {
    const now = await textAt(
      con,
      k.key,
      k.head.op === "delete" ? undefined : k.head.revision,
      `now (revision ${k.head.revision}${k.head.op === "delete" ? ", deleted" : ""})`,
    );
    const target = await textAt(
      con,
      k.key,
      k.revision,
      k.revision === undefined ? "after: deleted" : `after (what revision ${k.revision} held)`,
    );
    return html`
      <li class="plan plan-${k.action}">
        <p>${keyLink(k.key)}: <b>${what(k)}</b></p>
        <details open><summary>What changes in ${text(k.key)}</summary>${diffView(
          now,
          target,
        )}</details>
      </li>
    `;
  }));
  return html`<h2>Per key (${plural(plan.keys.length, "key", "keys")} to revert)</h2>
${
    plan.keys.length === 0
      ? notice("info", html`No key would be reverted.`)
      : html`<ul class="plan">${rows}</ul>`
  }
${
    plan.already.length === 0
      ? ""
      : html`<p>Already as before the run (nothing to write): ${
        plan.already.map((k, i) => html`${i === 0 ? "" : ", "}${keyLink(k)}`)
      }</p>`
  }
${
    plan.conflicts.length === 0
      ? ""
      : html`<h2>Left alone (${plural(plan.conflicts.length, "conflict", "conflicts")})</h2>
<ul class="conflicts">${
        plan.conflicts.map((x) => html`<li>${keyLink(x.key)}: ${text(x.reason)}</li>`)
      }</ul>`
  }
${
    con.chrome.writable
      ? plan.keys.length === 0
        ? ""
        : html`<form method="post" action="/run/${seg(run)}/revert">${csrfField(con)}
<input type="hidden" name="plan" value="${plan.fingerprint}">
<button type="submit" class="danger">Revert run ${text(run)}: ${
          plural(plan.keys.length, "key", "keys")
        }</button> <a href="/run/${seg(run)}">cancel</a>
</form>`
      : notice(
        "warn",
        html`This console is read-only: start it with <code>--write</code> to revert.`,
      )
  }`;
}

/** `GET /run/:run/revert`: the dry run. */
export async function revertPreviewPage(c: Context, con: Console) {
  const run = c.req.param("run")!;
  try {
    const plan = await planRevert(con, run);
    return render(
      c,
      con,
      `Revert run ${run}?`,
      html`<p>A dry run: nothing has been written. The revert puts every key this run wrote back to what it held before the run's first write; a key someone else wrote since is left alone.</p>${await planView(
        con,
        run,
        plan,
      )}`,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}

/** `POST /run/:run/revert`: the revert, if the store still matches the plan confirmed. */
export async function revertPost(c: Context, con: Console) {
  const run = c.req.param("run")!;
  const form = await changeForm(c, con);
  if (form instanceof Response) return form;
  try {
    const plan = await planRevert(con, run);
    if (plan.fingerprint !== form.plan) {
      return render(
        c,
        con,
        `Revert run ${run}?`,
        html`${
          notice(
            "warn",
            html`The store changed after the preview you confirmed; nothing was written. Here is the revert as it stands now.`,
          )
        }${await planView(con, run, plan)}`,
        409,
      );
    }
    const result = await revertRun(con.store, run, { scope: operatorScope() });
    con.index.wrote([...result.reverted, ...result.conflicts.map((x) => x.key)]);
    con.log(
      `reverted run ${run}: ${plural(result.reverted.length, "key", "keys")}, ${
        plural(result.conflicts.length, "conflict", "conflicts")
      }`,
    );
    return render(
      c,
      con,
      `Reverted run ${run}`,
      html`${
        notice(
          "info",
          html`Reverted ${plural(result.reverted.length, "key", "keys")}; ${
            plural(result.conflicts.length, "conflict", "conflicts")
          } left alone.`,
        )
      }
<ul class="plan">${
        result.actions.map((a) =>
          html`<li>${keyLink(a.key)}: ${what(a)}${
            a.wrote === undefined ? "" : html`
              (now revision ${a.wrote})
            `
          }</li>`
        )
      }</ul>
<p>The revert's own writes carry run ${runLink(result.by)}, so it can be undone in turn.</p>
${
        result.conflicts.length === 0
          ? ""
          : html`<ul class="conflicts">${
            result.conflicts.map((x) => html`<li>${keyLink(x.key)}: ${text(x.reason)}</li>`)
          }</ul>`
      }
<p><a href="/run/${seg(run)}">Back to the run</a> · <a href="/log">the audit log</a></p>`,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}
