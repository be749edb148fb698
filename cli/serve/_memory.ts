// One memory: what it holds now, its versions as a timeline with their provenance, one version's
// text, the diff between any two versions, and the restore of one (a confirmation page with the
// diff of exactly what the restore writes, then a POST).

import type { Context } from "hono";
import {
  type Entry,
  history,
  MemoryError,
  NotFoundError,
  readVersion,
  restoreVersion,
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
  body,
  type Html,
  html,
  notice,
  plural,
  PROVENANCE_HEADS,
  provenanceCells,
  redactedMark,
  seg,
  skipped,
  text,
} from "./_html.ts";

// What the memory holds now: its entry, or why it holds none (deleted, damaged).
async function current(con: Console, key: string): Promise<Entry | MemoryError> {
  try {
    return await con.store.read(key);
  } catch (e) {
    if (e instanceof MemoryError) return e;
    throw e;
  }
}

async function sideOf(con: Console, key: string, v: Version): Promise<Side> {
  if (v.op === "delete" || v.redacted !== undefined) {
    const what = v.op === "delete" ? "delete" : "redacted";
    return {
      title: `revision ${v.revision} (${what})`,
      description: undefined,
      content: undefined,
    };
  }
  const e = await readVersion(con.store, key, v.revision);
  return { title: `revision ${v.revision}`, description: e.description, content: e.content };
}

/** The kept version of `key` at `revision`, or a `NotFoundError` naming it. */
export function findVersion(
  versions: readonly Version[],
  key: string,
  revision: string | undefined,
): Version {
  const v = versions.find((x) => x.revision === revision);
  if (v === undefined) {
    throw new NotFoundError(
      `Cannot show version ${
        JSON.stringify(revision ?? "")
      } of memory "${key}": no kept version has that revision`,
      { key },
    );
  }
  return v;
}

/** `GET /memory/:key`. */
export async function memoryPage(c: Context, con: Console) {
  const key = c.req.param("key")!;
  try {
    // A history that cannot be read (a damaged record the backend does not skip) still leaves
    // the memory itself to show, with the reason.
    let unreadable: MemoryError | undefined;
    const versions = await history(con.store, key).catch((e) => {
      if (!(e instanceof MemoryError) || e.code !== "corrupt") throw e;
      unreadable = e;
      return Object.assign([] as Version[], { problems: [] });
    });
    const now = await current(con, key);
    const held = now instanceof MemoryError
      ? notice(
        now.code === "not_found" ? "info" : "error",
        now.code === "not_found"
          ? html`This memory holds nothing now${
            versions[0]?.op === "delete" ? " (its newest version is a delete)" : ""
          }.`
          : html`${now.message}`,
      )
      : html`
        <section class="entry">
          <h2>Now</h2>
          <p class="description">${text(now.description)}</p>
          <pre class="body">${body(now.content)}</pre>
        </section>
      `;
    const [newest, older] = versions;
    const timeline = unreadable !== undefined
      ? notice("error", html`${unreadable.message}`)
      : versions.length === 0
      ? notice("info", html`No kept version (written with history off, or pruned).`)
      : html`<form class="timeline" method="get" action="/memory/${seg(key)}/diff">
<h2>Versions (${plural(versions.length, "version", "versions")}, newest first)</h2>
<table class="versions"><thead><tr><th>from</th><th>to</th><th>revision</th><th>write</th><th>description</th>${PROVENANCE_HEADS}<th></th></tr></thead><tbody>${
        versions.map((v) =>
          html`<tr class="${v.tainted ? "row-tainted" : ""}">
<td><input type="radio" name="from" value="${v.revision}" aria-label="compare from revision ${v.revision}"${
            v === older ? " checked" : ""
          }></td>
<td><input type="radio" name="to" value="${v.revision}" aria-label="compare to revision ${v.revision}"${
            v === newest ? " checked" : ""
          }></td>
<td><a href="/memory/${
            seg(key)
          }/version/${v.revision}">${v.revision}</a></td><td class="op op-${v.op}">${v.op}</td>
<td>${text(v.description ?? "")}${redactedMark(v)}</td>${provenanceCells(v)}
<td>${
            v.op === "delete" || v === newest || v.redacted !== undefined ? "" : html`
              <a href="/memory/${seg(key)}/restore?rev=${v.revision}">restore…</a> <a
                href="/memory/${seg(key)}/redact?rev=${v.revision}">redact…</a>
            `
          }</td></tr>`
        )
      }</tbody></table>
${versions.length > 1 ? html`<button type="submit">Compare the two versions chosen</button>` : ""}
</form>`;
    const purge = versions.length === 0 && now instanceof MemoryError
      ? ""
      : html`<p><a href="/memory/${
        seg(key)
      }/purge">Purge this memory…</a> (a right-to-erasure request: every version's text removed)</p>`;
    return render(
      c,
      con,
      `Memory ${key}`,
      html`${skipped(versions.problems)}${held}${timeline}${purge}`,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}

/** `GET /memory/:key/version/:rev`. */
export async function versionPage(c: Context, con: Console) {
  const key = c.req.param("key")!;
  try {
    const versions = await history(con.store, key);
    const v = findVersion(versions, key, c.req.param("rev"));
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
    const content = v.op === "delete"
      ? notice("info", html`This version is a delete: it holds no text.`)
      : v.redacted !== undefined
      ? notice("info", html`This version's description and content are gone: ${redactedMark(v)}.`)
      : await (async () => {
        const e = await readVersion(con.store, key, v.revision);
        return html`
          <p class="description">${text(e.description)}</p>
          <pre class="body">${body(e.content)}</pre>
        `;
      })();
    return render(
      c,
      con,
      `Memory ${key}, revision ${v.revision}`,
      html`<p><a href="/memory/${seg(key)}">← the memory's timeline</a></p>${meta}${content}`,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}

/** `GET /memory/:key/diff?from=&to=`. */
export async function diffPage(c: Context, con: Console) {
  const key = c.req.param("key")!;
  try {
    const versions = await history(con.store, key);
    const from = findVersion(versions, key, c.req.query("from"));
    const to = findVersion(versions, key, c.req.query("to"));
    return render(
      c,
      con,
      `Memory ${key}: revision ${from.revision} → ${to.revision}`,
      html`<p><a href="/memory/${seg(key)}">← the memory's timeline</a></p>${
        diffView(await sideOf(con, key, from), await sideOf(con, key, to))
      }`,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}

/** `GET /memory/:key/restore?rev=`: what the restore will write, and the button. */
export async function restoreConfirmPage(c: Context, con: Console) {
  const key = c.req.param("key")!;
  try {
    const versions = await history(con.store, key);
    const target = findVersion(versions, key, c.req.query("rev"));
    return await restoreConfirm(c, con, key, versions, target, undefined);
  } catch (e) {
    return failurePage(c, con, e);
  }
}

async function restoreConfirm(
  c: Context,
  con: Console,
  key: string,
  versions: readonly Version[],
  target: Version,
  why: Html | undefined,
) {
  const head = versions[0]!;
  const to = await sideOf(con, key, target);
  const now = head.op === "delete"
    ? {
      title: `now (deleted at revision ${head.revision})`,
      description: undefined,
      content: undefined,
    }
    : { ...await sideOf(con, key, head), title: `now (revision ${head.revision})` };
  const action = con.chrome.writable
    ? html`<form method="post" action="/memory/${seg(key)}/restore">${csrfField(con)}
<input type="hidden" name="rev" value="${target.revision}">
<input type="hidden" name="head" value="${head.revision}">
<button type="submit" class="danger">Restore revision ${target.revision}</button> <a href="/memory/${
      seg(key)
    }">cancel</a>
</form>`
    : notice(
      "warn",
      html`This console is read-only: start it with <code>--write</code> to restore.`,
    );
  return render(
    c,
    con,
    `Restore ${key} to revision ${target.revision}?`,
    html`${
      why ?? ""
    }<p>The restore writes what revision ${target.revision} held as a new version of <b>${
      text(key)
    }</b>${
      head.op === "delete" ? ", re-creating the deleted memory" : ""
    }. Exactly this changes:</p>
${diffView(now, to)}${action}`,
    why === undefined ? 200 : 409,
  );
}

/** `POST /memory/:key/restore`. */
export async function restorePost(c: Context, con: Console) {
  const key = c.req.param("key")!;
  const form = await changeForm(c, con);
  if (form instanceof Response) return form;
  try {
    const versions = await history(con.store, key);
    const target = findVersion(versions, key, String(form.rev ?? ""));
    if (versions[0]?.revision !== form.head) {
      return await restoreConfirm(
        c,
        con,
        key,
        versions,
        target,
        notice(
          "warn",
          html`The memory changed after the page you confirmed on; nothing was written. Here is what a restore would change now.`,
        ),
      );
    }
    await restoreVersion(con.store, key, target.revision, { scope: operatorScope() });
    con.index.wrote([key]);
    const [now] = await history(con.store, key);
    con.log(
      `restored ${key} to what revision ${target.revision} held (now revision ${now?.revision})`,
    );
    return render(
      c,
      con,
      `Restored ${key}`,
      html`${
        notice(
          "info",
          html`Restored <b>${
            text(key)
          }</b> to what revision ${target.revision} held; it is now revision ${
            now?.revision ?? "?"
          }.`,
        )
      }<p><a href="/memory/${seg(key)}">See the memory's timeline</a></p>`,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}
