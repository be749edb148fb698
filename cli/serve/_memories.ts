// The index page (what the store holds, at a glance, with a link to every other page) and the
// memories page: every listed memory with its last writer and the tainted mark, a search through
// `memory_search`'s own ranking, and the damaged entries and history problems of the last audit.

import type { Context } from "hono";
import { listWithHeads, MAX_ENTRIES, searchMemories, type Version } from "../../mod.ts";
import { type Console, failurePage, render } from "./_context.ts";
import {
  grid,
  type Html,
  html,
  keyLink,
  notice,
  plural,
  PROBLEM_WORDS,
  query,
  runLink,
  taintMark,
  text,
  when,
} from "./_html.ts";
import type { TakenAudit } from "./_audit_cache.ts";
import { pendingCount } from "./_review.ts";

/** Memories on one page of the list or of a search (the store holds at most 1,024). */
const PAGE = 200;

async function listed(con: Console) {
  const found = await listWithHeads(con.store);
  if (found !== undefined) return found;
  return { items: await con.store.list(), heads: [] as Version[] };
}

function damageSection(taken: TakenAudit): Html {
  const damaged = taken.audit.entries.filter((e) => e.problem !== undefined);
  const chain = taken.audit.history ?? [];
  if (damaged.length === 0 && chain.length === 0) {
    return html`
      <p
        class="audit-ok">The audit at ${when(
          taken.at,
        )} found no damaged entry (<a href="/check">check again</a>).</p>
    `;
  }
  const rows = [
    ...damaged.map((e) => [
      e.key === undefined ? text(e.name) : keyLink(e.key),
      PROBLEM_WORDS[e.problem ?? ""] ?? e.problem,
      text(e.reason),
    ]),
    ...chain.map((p) => [
      html`${keyLink(p.key)}${
        p.revision === undefined ? "" : html`
          revision ${text(p.revision)}
        `
      }`,
      `history: ${p.problem}`,
      text(p.reason),
    ]),
  ];
  return html`
    <section
      class="damaged"><h2>Damaged (audit at ${when(taken.at)})</h2>${grid(
        [
          "name",
          "problem",
          "reason",
        ],
        rows,
      )}<p><a href="/check">Check the store now</a> for the full report (and a new audit).</p></section>
  `;
}

/** `GET /`: the overview. */
export async function overviewPage(c: Context, con: Console) {
  try {
    const { items, heads } = await listed(con);
    const tainted = heads.filter((v) => v.tainted).length;
    const taken = await con.audits.get();
    const damaged = taken.audit.entries.filter((e) => e.problem !== undefined).length;
    const info = con.store.info();
    const pending = await pendingCount(con);
    return render(
      c,
      con,
      "Overview",
      html`
        <dl class="facts">
                <dt>backend</dt><dd>${text(info.backend)}</dd>
                ${info.location === "" ? "" : html`
                  <dt>location</dt>
                  <dd>${text(info.location)}</dd>
                `}
                <dt>mode</dt><dd>${con.chrome.writable
                  ? "write: restore, revert, approve and reject are allowed, each after a confirmation"
                  : "read-only: nothing here changes the store"}</dd>
                </dl>
        <ul class="tiles">
          <li><a href="/memories">Memories</a>: ${plural(
            items.length,
            "memory",
            "memories",
          )} of ${MAX_ENTRIES.toLocaleString("en-US")}, ${plural(
            tainted,
            "last written by a tainted run",
            "last written by a tainted run",
          )}, ${plural(damaged, "damaged entry", "damaged entries")}</li>
          <li><a href="/log">Audit log</a>: every kept version, newest first, by run, actor, key, time, taint</li>
          <li><a href="/log?tainted=1">Tainted writes</a>: versions written by runs that read untrusted input</li>
          <li><a href="/runs">Runs</a>: every run that wrote, with a revert for each</li>
          <li><a href="/review">Review queue</a>: ${pending === undefined
            ? "no review here"
            : plural(
              pending,
              "write held",
              "writes held",
            )} for an operator (store option <code>review</code>)</li>
          <li><a href="/check">Check</a>: what <code>agentmem check</code> reports</li>
        </ul>
      `,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}

/** `GET /memories?q=`: the list, or a search. */
export async function memoriesPage(c: Context, con: Console) {
  const q = c.req.query("q") ?? "";
  try {
    const { items, heads } = await listed(con);
    const head = new Map(heads.map((v) => [v.key, v]));
    const taken = await con.audits.get();
    const tainted = heads.filter((v) => v.tainted).length;
    const counts = html`<p class="counts">${plural(items.length, "memory", "memories")} of ${
      MAX_ENTRIES.toLocaleString("en-US")
    }; ${plural(tainted, "memory was", "memories were")} last written by a tainted run.</p>`;
    const form = html`<form class="search" method="get" action="/memories">
<label>Search <input type="search" name="q" value="${q}" maxlength="500" placeholder="words in keys, descriptions, bodies"></label>
<button type="submit">Search</button>${
      q === "" ? "" : html`
        <a href="/memories">show all</a>
      `
    }
</form>`;
    const pageNo = Math.max(1, Number.parseInt(c.req.query("page") ?? "1") || 1);
    const shown = (all: readonly Row[]) =>
      html`${table(all.slice((pageNo - 1) * PAGE, pageNo * PAGE), head)}${
        pager(q, pageNo, all.length)
      }`;
    let rows: Html;
    if (q.trim() === "") rows = shown(items);
    else {
      const found = await searchMemories(con.store, q);
      rows = html`<p class="found">${
        found.terms.length === 0
          ? "The query holds no word to search for (letters or digits)."
          : `${plural(found.matches.length, "memory matches", "memories match")} (${
            plural(found.searched, "memory", "memories")
          } searched; best first, ranked as memory_search ranks them).`
      }</p>${shown(found.matches)}`;
    }
    return render(c, con, "Memories", html`${counts}${form}${rows}${damageSection(taken)}`);
  } catch (e) {
    return failurePage(c, con, e);
  }
}

type Row = { readonly key: string; readonly description: string; readonly snippet?: string };

function pager(q: string, pageNo: number, total: number): Html {
  const pages = Math.ceil(total / PAGE);
  if (pages <= 1) return html``;
  const link = (p: number) => `/memories${query({ q, page: p === 1 ? undefined : p })}`;
  return html`<p class="pager">${
    pageNo > 1 ? html`<a rel="prev" href="${link(pageNo - 1)}">← previous</a>` : ""
  } page ${pageNo} of ${pages} ${
    pageNo < pages ? html`<a rel="next" href="${link(pageNo + 1)}">next →</a>` : ""
  }</p>`;
}

function table(
  rows: readonly Row[],
  head: ReadonlyMap<string, Version>,
): Html {
  if (rows.length === 0) return notice("info", html`No memory to show.`);
  return html`
    <table class="memories">
      <thead>
        <tr>
          <th>key</th>
          <th>description</th>
          <th>last write</th>
          <th>run</th>
          <th>taint</th>
        </tr>
      </thead>
      <tbody>${rows.map((r) => {
        const v = head.get(r.key);
        return html`
          <tr class="${v?.tainted ? "row-tainted" : ""}">
            <td>${keyLink(r.key)}</td>
            <td>${text(r.description)}${r.snippet === undefined || r.snippet === ""
              ? ""
              : html`<div class="snippet">${text(r.snippet)}</div>`}</td>
            <td>${v === undefined ? "" : when(v.at)}</td>
            <td>${v === undefined ? "" : runLink(v.run)}</td>
            <td>${taintMark(v?.tainted ?? false)}</td>
          </tr>
        `;
      })}</tbody>
    </table>
  `;
}
