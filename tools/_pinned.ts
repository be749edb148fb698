// The pinned memories of the system note: which memories a `pin` list names, their bodies read
// (without authority), and the section that shows as many as fit, in pin order, framed as data
// with the tainted mark, saying which did not fit and how to read them.

import type { Version } from "../store/types.ts";
import { readWithVersion } from "../store/history.ts";
import type { Scope } from "../store/scope.ts";
import type { Item, Store } from "../store/types.ts";
import { entryLines, frame, quoteKey } from "./_frame.ts";
import { LIST, READ } from "./_names.ts";
import { taintFrom } from "./_taint.ts";
import { writerOf, writersOf } from "./_writers.ts";

// The owner of a note built without a scope: it wrote nothing (see _writers.ts).
const NO_RUN = Object.freeze({});
import { checkKeyRules, ruleNames } from "./_key_rules.ts";

/**
 * Checks a `pin` option: exact keys, or prefixes ending in "." (`"user."`).
 *
 * @throws {ConfigError} naming the entry and what a legal one looks like.
 */
export function checkPins(action: string, pins: unknown): readonly string[] {
  return checkKeyRules(action, "pin", pins);
}

/** The listed memories the pins name, in pin order (a prefix's in key order), each once. */
export function pinnedItems(items: readonly Item[], pins: readonly string[]): Item[] {
  const chosen = new Map<string, Item>();
  for (const pin of pins) {
    for (const item of items) {
      if (ruleNames(pin, item.key) && !chosen.has(item.key)) chosen.set(item.key, item);
    }
  }
  return [...chosen.values()];
}

// Bodies are read this many at once.
const READ_BATCH = 8;

const HEADING = "Pinned memories, shown in full at the start of every run:";

/**
 * The pinned section: as many of `items` (in pin order) as fit in `room` characters, each read
 * without a scope (showing it grants no overwrite) with the version it came from; one that does
 * not fit (or cannot be read) is left out and a later, smaller one may still show, until a whole
 * batch of reads shows none; then which were left out and how to read them. `""` when nothing is pinned, or when not even that fits.
 * Taints `scope` for each memory it shows whose version came from a tainted run.
 */
export async function pinnedSection(
  store: Store,
  items: readonly Item[],
  opts: { readonly room: number; readonly scope: Scope | null },
): Promise<string> {
  if (items.length === 0) return "";
  const keys = items.map((i) => i.key);
  const shown: { key: string; lines: string[]; version: Version | undefined }[] = [];
  const left: string[] = [];
  const who = { owner: opts.scope ?? NO_RUN, store, scope: opts.scope };
  const build = (blocks: readonly typeof shown[number][], out: readonly string[]) => {
    const lines = blocks.flatMap((b) => b.lines);
    const writer = writersOf(blocks.map((b) => writerOf(who, b.key, b.version)));
    const body = lines.length === 0 ? "" : `\n${frame("MEMORY DATA", lines, writer).text}`;
    return `${HEADING}${body}${out.length === 0 ? "" : `\n${leftOut(out)}`}\n\n`;
  };
  let full = false;
  for (let i = 0; i < keys.length; i += READ_BATCH) {
    // Once not even the smallest memory fits, or a whole batch did not, the rest are left out
    // unread: the note is full, and reading on would cost a read per key for nothing.
    if (full || build(shown, [...left, ...keys.slice(i)]).length + MIN_ENTRY > opts.room) {
      left.push(...keys.slice(i));
      break;
    }
    const before = shown.length;
    const batch = await Promise.all(
      keys.slice(i, i + READ_BATCH).map((key) =>
        readWithVersion(store, key).then(
          ({ entry, version }) => ({
            key,
            lines: entryLines(key, entry.description, entry.content, version),
            version,
          }),
          () => ({ key, lines: undefined, version: undefined }),
        )
      ),
    );
    batch.forEach((p, j) => {
      const rest = keys.slice(i + j + 1);
      const next = p.lines === undefined
        ? undefined
        : { key: p.key, lines: p.lines, version: p.version };
      if (next !== undefined && build([...shown, next], [...left, ...rest]).length <= opts.room) {
        shown.push(next);
      } else left.push(p.key);
    });
    full = shown.length === before;
  }
  const section = build(shown, left);
  if (section.length > opts.room) return "";
  for (const { version } of shown) taintFrom(opts.scope, version);
  return section;
}

// The fewest characters one more shown memory adds: its key, description and content lines.
const MIN_ENTRY = 'key: "k"\ndescription: \ncontent: (empty)\n'.length;

// Which pinned memories were left out: by key while that stays short, else how many.
function leftOut(keys: readonly string[]): string {
  const one = keys.length === 1;
  const named = keys.map(quoteKey).join(", ");
  const which = named.length <= 400 ? ` (${named})` : "";
  return `${one ? "One pinned memory" : `${keys.length} pinned memories`} did not fit in this ` +
    `note${which}; ${which === "" ? `find them with ${LIST} and ` : ""}read ` +
    `${one ? "it" : "them"} with ${READ}.`;
}
