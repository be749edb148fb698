// Erasure from the console: the redaction of one version (a confirmation page showing what goes,
// with a reason, then a POST) and the purge of a memory (a reason, and the key typed again to
// confirm, then a POST). The library refuses what cannot be done (the newest version, a delete,
// a version redacted already, a missing reason), and its typed error is the page shown; nothing
// is removed then.

import type { Context } from "hono";
import { history, proposals, purgeKey, readVersion, redactVersion } from "../../mod.ts";
import {
  changeForm,
  type Console,
  csrfField,
  failurePage,
  operatorScope,
  render,
} from "./_context.ts";
import {
  body,
  type Html,
  html,
  notice,
  plural,
  PROVENANCE_HEADS,
  provenanceCells,
  redactedMark,
  seg,
  text,
} from "./_html.ts";
import { findVersion } from "./_memory.ts";

// The most characters of a reason (the library's limit).
const MAX_REASON = 200;

const reasonField =
  html`<label>Reason (kept with the redaction) <input type="text" name="reason" required maxlength="${MAX_REASON}" placeholder="why it must go"></label>`;

function readOnlyNote(what: string): Html {
  return notice(
    "warn",
    html`This console is read-only: start it with <code>--write</code> to ${what}.`,
  );
}

/** `GET /memory/:key/redact?rev=`: the version, what goes, the reason and the button. */
export async function redactConfirmPage(c: Context, con: Console) {
  const key = c.req.param("key")!;
  try {
    const versions = await history(con.store, key);
    const v = findVersion(versions, key, c.req.query("rev"));
    const refused = v.redacted !== undefined
      ? html`It was redacted already: ${redactedMark(v)}.`
      : v.op === "delete"
      ? html`It is a delete, which holds no description or content.`
      : v === versions[0]
      ? html`It is what the memory holds now: update or delete the memory first, then redact this version.`
      : undefined;
    const meta = html`
      <table class="versions">
        <thead>
          <tr><th>write</th>${PROVENANCE_HEADS}</tr>
        </thead>
        <tbody>
          <tr><td class="op op-${v.op}">${v.op}</td>${provenanceCells(v)}</tr>
        </tbody>
      </table>
    `;
    if (refused !== undefined) {
      return render(
        c,
        con,
        `Memory ${key}, revision ${v.revision}: cannot be redacted`,
        html`${meta}${notice("warn", refused)}<p><a href="/memory/${
          seg(key)
        }">← the memory's timeline</a></p>`,
      );
    }
    const e = await readVersion(con.store, key, v.revision);
    const action = con.chrome.writable
      ? html`<form method="post" action="/memory/${seg(key)}/redact">${csrfField(con)}
<input type="hidden" name="rev" value="${v.revision}">
${reasonField}
<button type="submit" class="danger">Redact revision ${v.revision}</button> <a href="/memory/${
        seg(key)
      }">cancel</a></form>`
      : readOnlyNote("redact");
    return render(
      c,
      con,
      `Redact revision ${v.revision} of ${key}?`,
      html`
        ${meta}<p>The redaction removes this description and content from everything the store keeps (the version's copies, and the search's vectors of the memory), for good. The version keeps its place, provenance and hash, marked redacted with who, when and why; <code>check</code> still verifies it.</p>
        <section class="entry">
          <h2>What is removed</h2>
          <p class="description">${text(e.description)}</p>
          <pre class="body">${body(e.content)}</pre>
        </section>${action}
      `,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}

/** `POST /memory/:key/redact`. */
export async function redactPost(c: Context, con: Console) {
  const key = c.req.param("key")!;
  const form = await changeForm(c, con);
  if (form instanceof Response) return form;
  const revision = String(form.rev ?? "");
  try {
    const v = await redactVersion(con.store, key, revision, {
      reason: String(form.reason ?? "").trim(),
      scope: operatorScope(),
    });
    con.index.wrote([key]);
    con.log(`redacted ${key} revision ${revision}`);
    return render(
      c,
      con,
      `Redacted revision ${revision} of ${key}`,
      html`${
        notice(
          "info",
          html`Redacted revision ${v.revision} of <b>${
            text(key)
          }</b>: its description and content are gone from the store.`,
        )
      }<p><a href="/memory/${seg(key)}">See the memory's timeline</a></p>`,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}

async function heldFor(con: Console, key: string): Promise<number> {
  try {
    return (await proposals(con.store, { key, status: "all" })).length;
  } catch {
    return 0;
  }
}

async function purgeConfirm(c: Context, con: Console, key: string, why: Html | undefined) {
  const versions = await history(con.store, key);
  const holds = await con.store.read(key).then(() => true, () => false);
  const held = await heldFor(con, key);
  const action = con.chrome.writable
    ? html`<form method="post" action="/memory/${seg(key)}/purge">${csrfField(con)}
${reasonField}
<label>Type the memory's key to confirm <input type="text" name="confirm" required autocomplete="off" placeholder="${key}"></label>
<button type="submit" class="danger">Purge ${text(key)}</button> <a href="/memory/${
      seg(key)
    }">cancel</a></form>`
    : readOnlyNote("purge");
  return render(
    c,
    con,
    `Purge ${key}?`,
    html`${why ?? ""}<p>The purge is for a right-to-erasure request. It ${
      holds ? "deletes the memory (a delete version by the operator) and " : ""
    }removes the description and content of ${
      plural(
        versions.filter((v) => v.op !== "delete" && v.redacted === undefined).length,
        "version",
        "versions",
      )
    } from everything the store keeps, and drops the search's vectors of it${
      held === 0 ? "" : ` and ${plural(held, "write", "writes")} held for review of it`
    }. The versions keep their places and provenance, marked redacted with the reason. It cannot be undone.</p>${action}`,
    why === undefined ? 200 : 400,
  );
}

/** `GET /memory/:key/purge`: what the purge removes, the reason, the confirmation. */
export async function purgeConfirmPage(c: Context, con: Console) {
  try {
    return await purgeConfirm(c, con, c.req.param("key")!, undefined);
  } catch (e) {
    return failurePage(c, con, e);
  }
}

/** `POST /memory/:key/purge`: only with the key typed again in `confirm`. */
export async function purgePost(c: Context, con: Console) {
  const key = c.req.param("key")!;
  const form = await changeForm(c, con);
  if (form instanceof Response) return form;
  try {
    if (form.confirm !== key) {
      const why = notice(
        "warn",
        html`Nothing was purged: type the memory's key, <b>${text(key)}</b>, to confirm.`,
      );
      return await purgeConfirm(c, con, key, why);
    }
    const r = await purgeKey(con.store, key, {
      reason: String(form.reason ?? "").trim(),
      scope: operatorScope(),
    });
    con.index.wrote([key]);
    con.log(`purged ${key}: ${r.redacted.length} versions redacted`);
    return render(
      c,
      con,
      `Purged ${key}`,
      html`${
        notice(
          "info",
          html`Purged <b>${text(key)}</b>: ${r.deleted ? "deleted, " : ""}${
            plural(r.redacted.length, "version", "versions")
          } redacted, ${plural(r.proposals, "held write", "held writes")} dropped.`,
        )
      }<p><a href="/memory/${seg(key)}">See the memory's timeline</a></p>`,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}
