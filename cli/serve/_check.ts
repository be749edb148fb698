// The check page: what `agentmem check` reports (every name in the keyspace, healthy or not, the
// history's problems, stray locks), from a new audit at each visit.

import type { Context } from "hono";
import { type Anchor, type AuditEntry, checkAnchor } from "../../mod.ts";
import { type Console, failurePage, render } from "./_context.ts";
import { type Html, html, keyLink, notice, plural, text, when } from "./_html.ts";

function label(e: AuditEntry): string {
  switch (e.problem) {
    case "corrupt":
      return "damaged";
    case "illegal_name":
      return "illegal name";
    case "not_a_file":
      return "not a memory file";
    case "unreadable":
      return "unreadable";
    default:
      return "ok";
  }
}

// The anchor check (`--anchor`): every anchored key whose chain no longer extends its anchored
// state. A file that cannot be read or parsed, or an anchor of another store, is said as such.
async function anchorSection(con: Console): Promise<Html | ""> {
  if (con.anchor === undefined) return "";
  let found;
  try {
    // The reader's errors carry messages written for the page (no path).
    found = await checkAnchor(con.store, JSON.parse(await con.anchor()) as Anchor);
  } catch (e) {
    const why = e instanceof SyntaxError
      ? "the anchor file is not valid JSON"
      : e instanceof Error && !(e instanceof TypeError)
      ? e.message
      : "the anchor could not be checked";
    return html`<h2>Anchor</h2>${notice("error", html`${why}`)}`;
  }
  const summary = notice(
    found.problems.length === 0 ? "info" : "error",
    html`The anchor given by <code>--anchor</code>: ${
      plural(found.checked, "key", "keys")
    } checked${
      found.outside === 0
        ? ""
        : html`, ${plural(found.outside, "key", "keys")} outside this store's prefix`
    }; ${plural(found.problems.length, "problem", "problems")}.`,
  );
  return html`<h2>Anchor</h2>${summary}${
    found.problems.length === 0 ? "" : html`
      <table>
        <thead>
          <tr>
            <th>key</th>
            <th>revision</th>
            <th>problem</th>
            <th>reason</th>
          </tr>
        </thead>
        <tbody>${found.problems.map((p) =>
          html`
            <tr>
              <td>${keyLink(p.key)}</td>
              <td>${text(p.revision ?? "")}</td>
              <td>${p.problem}</td>
              <td>${text(p.reason)}</td>
            </tr>
          `
        )}</tbody>
      </table>
    `
  }`;
}

/** `GET /check`. */
export async function checkPage(c: Context, con: Console) {
  try {
    const { audit, at } = await con.audits.fresh();
    const problems = audit.entries.filter((e) => e.problem !== undefined);
    const chain = audit.history ?? [];
    const locks = audit.locks ?? [];
    const blocking = locks.filter((l) => l.state === "foreign").length;
    const clean = problems.length === 0 && chain.length === 0 && blocking === 0;
    const summary = notice(
      clean ? "info" : "error",
      html`${plural(audit.entries.length, "entry", "entries")}, ${
        audit.entries.length - problems.length
      } healthy, ${plural(problems.length, "problem", "problems")}; history: ${
        plural(chain.length, "problem", "problems")
      }${
        blocking === 0 ? "" : html`; ${plural(blocking, "lock", "locks")} to remove`
      } (audited at ${when(at)}).`,
    );
    const entries: Html = problems.length === 0 ? "" as unknown as Html : html`
      <h2>Entries</h2>
      <table>
        <thead>
          <tr>
            <th>name</th>
            <th>problem</th>
            <th>reason</th>
          </tr>
        </thead>
        <tbody>${problems.map((p) =>
          html`
            <tr>
              <td>${p.key === undefined ? text(p.name) : keyLink(p.key)}</td>
              <td>${label(p)}</td>
              <td>${text(p.reason)}</td>
            </tr>
          `
        )}</tbody>
      </table>
    `;
    const history = chain.length === 0 ? "" : html`
      <h2>History</h2>
      <table>
        <thead>
          <tr>
            <th>key</th>
            <th>revision</th>
            <th>problem</th>
            <th>reason</th>
          </tr>
        </thead>
        <tbody>${chain.map((p) =>
          html`
            <tr>
              <td>${keyLink(p.key)}</td>
              <td>${text(p.revision ?? "")}</td>
              <td>${p.problem}</td>
              <td>${text(p.reason)}</td>
            </tr>
          `
        )}</tbody>
      </table>
    `;
    const lockRows = locks.length === 0 ? "" : html`
      <h2>Locks</h2>
      <table>
        <thead>
          <tr>
            <th>name</th>
            <th>state</th>
            <th>reason</th>
          </tr>
        </thead>
        <tbody>${locks.map((l) =>
          html`
            <tr>
              <td>${text(l.name)}</td>
              <td>${l.state}</td>
              <td>${text(l.reason)}</td>
            </tr>
          `
        )}</tbody>
      </table>
    `;
    const ignored = audit.ignored.length === 0
      ? ""
      : html`<p>${
        plural(audit.ignored.length, "other name", "other names")
      } ignored (never memories): ${text(audit.ignored.slice(0, 20).join(", "))}${
        audit.ignored.length > 20 ? ", …" : ""
      }</p>`;
    const anchored = await anchorSection(con);
    return render(
      c,
      con,
      "Check",
      html`${summary}${entries}${history}${lockRows}${ignored}${anchored}`,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}
