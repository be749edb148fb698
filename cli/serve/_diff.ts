// A diff between two texts of a memory (two versions, or the current text and what a restore, a
// revert or a proposal would write), from the `diff` library's line diff: hunks with three lines
// of context and line numbers on both sides, every line shown as data.

import { structuredPatch } from "diff";
import { body, type Html, html, text } from "./_html.ts";

/** One side of a diff: a title (e.g. "revision 4") and its text, `undefined` when absent. */
export interface Side {
  readonly title: string;
  readonly description: string | undefined;
  readonly content: string | undefined;
}

// A hunk's lines on one side: "3", "3–7", or "none" (nothing on that side).
function range(start: number, count: number): string {
  return count === 0 ? "none" : count === 1 ? `${start}` : `${start}–${start + count - 1}`;
}

function lineClass(mark: string): string {
  return mark === "+" ? "add" : mark === "-" ? "del" : "ctx";
}

/** The diff of `from` to `to`: the description's change, then the body's hunks. */
export function diffView(from: Side, to: Side): Html {
  const descriptionChanged = from.description !== to.description;
  const patch = structuredPatch(
    "",
    "",
    from.content ?? "",
    to.content ?? "",
    undefined,
    undefined,
    {
      context: 3,
    },
  );
  const hunks = patch.hunks.map((h) => {
    let oldNo = h.oldStart;
    let newNo = h.newStart;
    const rows = h.lines.map((line) => {
      const mark = line[0] ?? " ";
      if (mark === "\\") {
        return html`
          <tr class="note">
            <td></td>
            <td></td>
            <td colspan="2">${line.slice(2)}</td>
          </tr>
        `;
      }
      const left = mark === "+" ? "" : String(oldNo++);
      const right = mark === "-" ? "" : String(newNo++);
      return html`
        <tr class="${lineClass(mark)}">
          <td class="ln">${left}</td>
          <td class="ln">${right}</td>
          <td class="mark">${mark}</td>
          <td>
            <pre>${body(line.slice(1))}</pre>
          </td>
        </tr>
      `;
    });
    return html`<tbody><tr class="hunk"><td colspan="4">lines ${range(h.oldStart, h.oldLines)} → ${
      range(h.newStart, h.newLines)
    }</td></tr>${rows}</tbody>`;
  });
  return html`<div class="diff">
<p class="diff-sides"><span class="del">− ${from.title}</span> <span class="add">+ ${to.title}</span></p>
${
    descriptionChanged
      ? html`
        <table class="diff-description">
          <tr class="del">
            <th>description</th>
            <td class="mark">−</td>
            <td>${from.description === undefined
              ? html`<span class="none">(none: deleted)</span>`
              : text(from.description)}</td>
          </tr>
          <tr class="add">
            <th>description</th>
            <td class="mark">+</td>
            <td>${to.description === undefined
              ? html`<span class="none">(none: deleted)</span>`
              : text(to.description)}</td>
          </tr>
        </table>
      `
      : html`<p class="same">The description is the same.</p>`
  }
${
    hunks.length === 0
      ? html`<p class="same">The body is the same.</p>`
      : html`<table class="diff-body">${hunks}</table>`
  }
</div>`;
}
