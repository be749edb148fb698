// The audit log (every kept version, newest first, filtered by run, actor, key, time range and
// taint, in pages), the runs that wrote (found from the same log), and one run's writes.

import type { Context } from "hono";
import type { Version } from "../../mod.ts";
import { type Console, failurePage, render } from "./_context.ts";
import type { LogIndex } from "./_log_index.ts";
import {
  type Html,
  html,
  keyLink,
  notice,
  plural,
  PROVENANCE_HEADS,
  provenanceCells,
  query,
  redactedMark,
  runLink,
  seg,
  skipped,
  taintMark,
  text,
  when,
} from "./_html.ts";

/** Versions on one page of the audit log. */
export const LOG_PAGE = 50;

interface Filter {
  readonly run: string;
  readonly actor: string;
  readonly key: string;
  readonly since: string;
  readonly until: string;
  readonly tainted: string;
}

function instant(value: string, name: string): number | undefined {
  if (value === "") return undefined;
  const t = Date.parse(value);
  if (Number.isNaN(t)) {
    throw new RangeError(`"${name}" must be a time in ISO 8601, like 2026-12-01T08:00Z`);
  }
  return t;
}

function matcher(f: Filter): (v: Version) => boolean {
  const since = instant(f.since, "since");
  const until = instant(f.until, "until");
  const tainted = f.tainted === "1" ? true : f.tainted === "0" ? false : undefined;
  return (v) => {
    if (f.run !== "" && v.run !== f.run) return false;
    if (f.actor !== "" && v.actor !== f.actor) return false;
    if (f.key !== "" && v.key !== f.key) return false;
    if (tainted !== undefined && v.tainted !== tainted) return false;
    const at = since === undefined && until === undefined ? 0 : Date.parse(v.at);
    if (since !== undefined && at < since) return false;
    if (until !== undefined && at >= until) return false;
    return true;
  };
}

/** Rows of versions, with the key column. */
export function versionRows(versions: readonly Version[]): Html {
  return html`
    <table class="versions">
      <thead>
        <tr><th>key</th><th>revision</th><th>write</th><th>description</th>${PROVENANCE_HEADS}</tr>
      </thead>
      <tbody>${versions.map((v) =>
        html`
          <tr
            class="${v.tainted ? "row-tainted" : ""}"><td>${keyLink(
              v.key,
            )}</td><td><a href="/memory/${seg(v.key)}/version/${v.revision}">${v
              .revision}</a></td><td class="op op-${v.op}">${v.op}</td><td>${text(
                v.description ?? "",
              )}${redactedMark(v)}</td>${provenanceCells(v)}</tr>
        `
      )}</tbody>
    </table>
  `;
}

/** `GET /log`. */
export async function logPage(c: Context, con: Console) {
  const f: Filter = {
    run: c.req.query("run") ?? "",
    actor: c.req.query("actor") ?? "",
    key: c.req.query("key") ?? "",
    since: c.req.query("since") ?? "",
    until: c.req.query("until") ?? "",
    tainted: c.req.query("tainted") ?? "",
  };
  const pageNo = Math.max(1, Math.min(1_000_000, Number.parseInt(c.req.query("page") ?? "1") || 1));
  let keep: (v: Version) => boolean;
  try {
    keep = matcher(f);
  } catch (e) {
    return render(
      c,
      con,
      "Audit log",
      html`${filterForm(f)}${notice("error", html`${(e as Error).message}`)}`,
      400,
    );
  }
  try {
    if (c.req.query("reread") === "1") await con.index.reread();
    const { versions, more } = await con.index.select(keep, {
      skip: (pageNo - 1) * LOG_PAGE,
      take: LOG_PAGE,
    });
    const link = (p: number) => `/log${query({ ...f, page: p === 1 ? undefined : p })}`;
    const pager = html`<p class="pager">${
      pageNo > 1 ? html`<a rel="prev" href="${link(pageNo - 1)}">← newer</a>` : ""
    } page ${pageNo} ${more ? html`<a rel="next" href="${link(pageNo + 1)}">older →</a>` : ""}</p>`;
    return render(
      c,
      con,
      "Audit log",
      html`${filterForm(f)}${skipped(con.index.problems)}${
        versions.length === 0
          ? notice("info", html`No kept version matches.`)
          : html`<p>Newest first, ${LOG_PAGE} a page. The whole history was read at ${
            when(con.index.readAt ?? "")
          } and is kept up to date from the listing (<a href="${`/log${
            query({ ...f, reread: 1 })
          }`}">read it all again</a>).</p>${versionRows(versions)}${pager}`
      }`,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}

function filterForm(f: Filter): Html {
  const field = (name: keyof Filter, label: string, hint: string) =>
    html`<label>${label} <input type="text" name="${name}" value="${
      f[name]
    }" placeholder="${hint}"></label>`;
  return html`<form class="filters" method="get" action="/log">
${field("run", "run", "run id")} ${field("actor", "actor", "actor")} ${
    field("key", "key", "memory key")
  }
${field("since", "since", "2026-12-01T08:00Z")} ${field("until", "until", "2026-12-02T00:00Z")}
<label>taint <select name="tainted">
<option value=""${f.tainted === "" ? " selected" : ""}>any</option>
<option value="1"${f.tainted === "1" ? " selected" : ""}>tainted only</option>
<option value="0"${f.tainted === "0" ? " selected" : ""}>untainted only</option>
</select></label>
<button type="submit">Filter</button> <a href="/log">clear</a>
</form>`;
}

interface RunSummary {
  readonly run: string;
  writes: number;
  readonly keys: Set<string>;
  readonly actors: Set<string>;
  first: string;
  last: string;
  tainted: boolean;
}

const runsMemo = new WeakMap<LogIndex, { generation: number; runs: RunSummary[] }>();

/** `GET /runs`: every run that wrote a kept version, most recent first. */
export async function runsPage(c: Context, con: Console) {
  try {
    const all = await con.index.versions();
    let memo = runsMemo.get(con.index);
    if (memo?.generation !== con.index.generation) {
      const byRun = new Map<string, RunSummary>();
      for (const v of all) {
        if (v.run === undefined) continue;
        let r = byRun.get(v.run);
        if (r === undefined) {
          byRun.set(
            v.run,
            r = {
              run: v.run,
              writes: 0,
              keys: new Set(),
              actors: new Set(),
              first: v.at,
              last: v.at,
              tainted: false,
            },
          );
        }
        r.writes++;
        r.keys.add(v.key);
        if (v.actor !== undefined) r.actors.add(v.actor);
        r.first = v.at; // newest first: the last seen is the earliest
        r.tainted ||= v.tainted;
      }
      memo = { generation: con.index.generation, runs: [...byRun.values()] };
      runsMemo.set(con.index, memo);
    }
    const runs = memo.runs;
    return render(
      c,
      con,
      "Runs",
      runs.length === 0 ? notice("info", html`No kept version names a run.`) : html`
        <p>${plural(
          runs.length,
          "run",
          "runs",
        )} wrote the kept versions, the most recent first. Tainted runs had read untrusted input.</p>
        <table class="runs">
          <thead>
            <tr>
              <th>run</th>
              <th>actor</th>
              <th>writes</th>
              <th>keys</th>
              <th>taint</th>
              <th>first write</th>
              <th>last write</th>
            </tr>
          </thead>
          <tbody>${runs.map((r) =>
            html`
              <tr class="${r.tainted ? "row-tainted" : ""}">
                <td>${runLink(r.run)}</td>
                <td>${text([...r.actors].join(", "))}</td>
                <td>${r.writes}</td>
                <td>${r.keys.size}</td>
                <td>${taintMark(r.tainted)}</td>
                <td>${when(r.first)}</td>
                <td>${when(r.last)}</td>
              </tr>
            `
          )}</tbody>
        </table>
      `,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}

/** `GET /run/:run`: every kept version the run wrote, and the way to its revert. */
export async function runPage(c: Context, con: Console) {
  const run = c.req.param("run")!;
  try {
    const { versions } = await con.index.select((v) => v.run === run, {
      skip: 0,
      take: Number.MAX_SAFE_INTEGER,
    });
    const keys = new Set(versions.map((v) => v.key));
    return render(
      c,
      con,
      `Run ${run}`,
      versions.length === 0
        ? notice("info", html`No kept version was written by this run.`)
        : html`<p>${plural(versions.length, "write", "writes")} to ${
          plural(keys.size, "key", "keys")
        }, newest first${versions.some((v) => v.tainted) ? html`; ${taintMark(true)}` : ""}.</p>
<p><a class="button" href="/run/${
          seg(run)
        }/revert">Preview the revert of this run…</a> (a dry run: it shows what would change, per key, and writes nothing)</p>
${versionRows(versions)}`,
    );
  } catch (e) {
    return failurePage(c, con, e);
  }
}
