// How the console writes HTML. Every value goes through hono's `html` template, which escapes it;
// stored text (descriptions, bodies, run ids, actors) goes through `text`/`body`, which also
// shows control, bidirectional and invisible characters as visible marks, so a memory can never
// become markup nor hide or reorder what the operator reads. `raw` is used only here, on text
// this file escaped itself.

import { html as honoHtml, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { HistoryProblem, Version } from "../../mod.ts";

/** A piece of HTML the console made (escaped). */
export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

const SQUEEZED = new WeakMap<TemplateStringsArray, TemplateStringsArray>();

// The template's own line breaks and indentation (the formatter's layout, about a third of a long
// page's bytes) go: next to a tag, entirely; between words, as one space. Only the template's
// static text is touched, never a value, so stored text keeps every space and line.
function squeeze(strings: TemplateStringsArray): TemplateStringsArray {
  const parts = strings.map((s) =>
    s.replace(/>\n\s*/g, ">").replace(/\n\s*</g, "<").replace(/\n\s*/g, " ")
  );
  return Object.assign(parts, { raw: parts }) as unknown as TemplateStringsArray;
}

/** hono's `html` template (every value escaped), without the template's own layout. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let squeezed = SQUEEZED.get(strings);
  if (squeezed === undefined) SQUEEZED.set(strings, squeezed = squeeze(strings));
  return honoHtml(squeezed, ...values);
}

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};
// Controls, format characters (bidi controls, zero-width ones, the BOM, tags), line and
// paragraph separators, lone surrogates and the supplementary variation selectors.
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u{E0100}-\u{E01EF}]/gu;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function mark(ch: string, keepLines: boolean): string {
  if (keepLines && (ch === "\n" || ch === "\t")) return ch;
  const cp = ch.codePointAt(0)!;
  const name = `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
  return `<span class="hidden-char" title="an invisible character in the stored text">${name}</span>`;
}

function visible(s: string, keepLines: boolean): HtmlEscapedString {
  let out = "";
  let last = 0;
  for (const m of s.matchAll(HIDDEN)) {
    out += escapeHtml(s.slice(last, m.index)) + mark(m[0], keepLines);
    last = m.index + m[0].length;
  }
  return raw(out + escapeHtml(s.slice(last)));
}

/** Stored text on one line: escaped, with hidden characters shown as marks. */
export function text(s: string | undefined): HtmlEscapedString {
  return visible(s ?? "", false);
}

/** A stored body for a `<pre>`: like `text`, but line feeds and tabs stay. */
export function body(s: string): HtmlEscapedString {
  return visible(s, true);
}

/** A path segment for a link (keys and run ids are URL-safe, but nothing is assumed). */
export function seg(s: string): string {
  return encodeURIComponent(s);
}

/** A query string from the fields given (empty ones left out), with its `?`. */
export function query(fields: Readonly<Record<string, string | number | undefined>>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s === "" ? "" : `?${s}`;
}

/** What the layout needs to know about the console. */
export interface Chrome {
  /** Whether state changes are allowed (`--write`). */
  readonly writable: boolean;
  /** The backend's name and its operator-given location, for the header. */
  readonly where: string;
}

const NAV: readonly (readonly [string, string])[] = [
  ["/memories", "Memories"],
  ["/log", "Audit log"],
  ["/runs", "Runs"],
  ["/review", "Review"],
  ["/check", "Check"],
];

/** A whole page. */
export function page(chrome: Chrome, title: string, main: Html): Html {
  return html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="same-origin">
        <title>${title} · agentmem console</title>
        <link rel="stylesheet" href="/console.css">
      </head>
      <body>
        <header>
          <a class="brand" href="/">agentmem console</a>
          <nav>${NAV.map(([href, label]) => html`<a href="${href}">${label}</a>`)}</nav>
          <span class="where">${chrome.where}</span>
          <span class="mode ${chrome.writable ? "mode-write" : "mode-read"}">${chrome.writable
            ? "write"
            : "read-only"}</span>
        </header>
        <main>
    <h1>${title}</h1>
    ${main}
        </main>
      </body>
    </html>
  `;
}

/** A link to a memory's page. */
export function keyLink(key: string): Html {
  return html`<a class="key" href="/memory/${seg(key)}">${text(key)}</a>`;
}

/** A link to a run's page. */
export function runLink(run: string | undefined): Html {
  return run === undefined
    ? html`<span class="none">no run</span>`
    : html`<a class="run" href="/run/${seg(run)}">${text(run)}</a>`;
}

/** The tainted mark. */
export function taintMark(tainted: boolean): Html {
  return tainted
    ? html`<span class="tainted" title="written by a run that had read untrusted input">tainted</span>`
    : html``;
}

/** An instant, as stored. */
export function when(at: string): Html {
  return html`<time datetime="${at}">${at.replace("T", " ").replace(/\.\d+Z$|Z$/, "Z")}</time>`;
}

/** What a page says of a redacted version: when, by whom, why; nothing for another. */
export function redactedMark(v: Version): Html | string {
  const r = v.redacted;
  if (r === undefined) return "";
  return html`<span class="redacted">redacted at ${when(r.at)}${
    text(r.actor === undefined ? "" : ` by ${r.actor}`)
  }: ${text(r.reason)}</span>`;
}

/** The provenance of a version, as table cells: run, actor, via, call id, taint, time. */
export function provenanceCells(v: Version): Html {
  return html`
    <td>${runLink(v.run)}</td>
    <td>${text(v.actor ?? "")}</td>
    <td>${text(v.via)}</td>
    <td class="call">${text(v.callId ?? "")}</td>
    <td>${taintMark(v.tainted)}</td>
    <td>${when(v.at)}</td>
  `;
}

/** The header cells matching `provenanceCells`. */
export const PROVENANCE_HEADS: Html = html`
  <th>run</th>
  <th>actor</th>
  <th>via</th>
  <th>call id</th>
  <th>taint</th>
  <th>time</th>
`;

/** A notice box. */
export function notice(kind: "info" | "warn" | "error", content: Html): Html {
  return html`<p class="notice notice-${kind}">${content}</p>`;
}

/** `n thing(s)`. */
export function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

/** A table: the column heads, then one row of cells (text is escaped, `Html` kept) per item. */
export function grid(heads: readonly string[], rows: readonly (readonly unknown[])[]): Html {
  return html`
    <table>
      <thead>
        <tr>${heads.map((h) => html`<th>${h}</th>`)}</tr>
      </thead>
      <tbody>${rows.map((r) => html`<tr>${r.map((cell) => html`<td>${cell}</td>`)}</tr>`)}</tbody>
    </table>
  `;
}

/** What an audit or an anchor check calls an entry's problem, in the operator's words. */
export const PROBLEM_WORDS: Readonly<Record<string, string>> = {
  corrupt: "damaged",
  illegal_name: "illegal name",
  not_a_file: "not a memory file",
  unreadable: "unreadable",
};

/** What a history read skipped (a damaged record, a stray file), said above what it shows. */
export function skipped(problems: readonly HistoryProblem[]): Html {
  if (problems.length === 0) return html``;
  return notice(
    "warn",
    html`
      ${plural(
        problems.length,
        "history record was",
        "history records were",
      )} skipped, damaged or foreign (<a
        href="/check">the check</a> names them): ${problems.slice(0, 10).map((p, i) =>
          html`${i === 0 ? "" : "; "}${text(p.key)}${
            p.revision === undefined ? "" : html`
              revision ${text(p.revision)}
            `
          }: ${text(p.reason)}`
        )}${problems.length > 10 ? "; …" : ""}
    `,
  );
}
