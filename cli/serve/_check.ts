// The check page: what `agentmem check` reports (every name in the keyspace, healthy or not, the
// history's problems, stray locks), from a new audit at each visit, and with `--anchor` the check
// against a saved anchor.

import type { Context } from "hono";
import { checkAnchor, type HistoryProblem } from "../../mod.ts";
import { type Console, failurePage, render } from "./_context.ts";
import {
  grid,
  type Html,
  html,
  keyLink,
  notice,
  plural,
  PROBLEM_WORDS,
  text,
  when,
} from "./_html.ts";

function chainTable(problems: readonly HistoryProblem[]): Html {
  return grid(
    ["key", "revision", "problem", "reason"],
    problems.map((p) => [keyLink(p.key), text(p.revision ?? ""), p.problem, text(p.reason)]),
  );
}

// The anchor check: every anchored key whose chain no longer extends its anchored state. A file
// that cannot be read or parsed, or an anchor of another store, is said as such.
async function anchorSection(con: Console): Promise<Html | ""> {
  if (con.anchor === undefined) return "";
  let found;
  try {
    found = await checkAnchor(con.store, await con.anchor());
  } catch (e) {
    // The reader's and checkAnchor's messages name no path; anything else is said by its kind.
    const why = e instanceof Error && e.name !== "TypeError" && e.name !== "Error"
      ? e.message
      : "the anchor could not be checked";
    return html`<h2>Anchor</h2>${notice("error", html`${why}`)}`;
  }
  const outside = found.outside === 0
    ? ""
    : html`, ${plural(found.outside, "key", "keys")} outside this store's prefix`;
  return html`<h2>Anchor</h2>${
    notice(
      found.problems.length === 0 ? "info" : "error",
      html`The anchor given by <code>--anchor</code>: ${
        plural(found.checked, "key", "keys")
      } checked${outside}; ${plural(found.problems.length, "problem", "problems")}.`,
    )
  }${found.problems.length === 0 ? "" : chainTable(found.problems)}`;
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
    const entries = problems.length === 0 ? "" : html`<h2>Entries</h2>${
      grid(
        ["name", "problem", "reason"],
        problems.map((p) => [
          p.key === undefined ? text(p.name) : keyLink(p.key),
          PROBLEM_WORDS[p.problem ?? ""] ?? p.problem,
          text(p.reason),
        ]),
      )
    }`;
    const history = chain.length === 0 ? "" : html`<h2>History</h2>${chainTable(chain)}`;
    const lockRows = locks.length === 0
      ? ""
      : html`<h2>Locks</h2>${
        grid(["name", "state", "reason"], locks.map((l) => [text(l.name), l.state, text(l.reason)]))
      }`;
    const ignored = audit.ignored.length === 0
      ? ""
      : html`<p>${
        plural(audit.ignored.length, "other name", "other names")
      } ignored (never memories): ${text(audit.ignored.slice(0, 20).join(", "))}${
        audit.ignored.length > 20 ? ", …" : ""
      }</p>`;
    return render(
      c,
      con,
      "Check",
      html`${summary}${entries}${history}${lockRows}${ignored}${await anchorSection(con)}`,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}
