// What Claude's memory tool does to a file's text: the edits it makes, the description a file
// gets, and the sizes it shows. Pure functions; the handlers do the I/O (paths: _paths.ts).
//
// The edit rules are those of the memory tool's documentation and of the Python SDK's filesystem
// tool. The TypeScript SDK's BetaLocalFilesystemMemoryTool follows the same rules but for two
// defects, where this library differs on purpose (DIFFERENCES below); everywhere else a command
// succeeds or fails here exactly when it would there, and leaves the same text.
//
// Where we differ on purpose from the TypeScript SDK's tool, which matches `old_str` line by line
// (anthropic-sdk-typescript issue 1180):
//
// 1. `str_replace` counts the occurrences of `old_str` in the whole text, as the Python SDK does:
//    it must occur exactly once (occurrences do not overlap) and may span lines. The TypeScript
//    tool refuses a multi-line `old_str` ("did not appear verbatim"), accepts one that occurs
//    twice on one line (replacing the first), and accepts an empty one in a one-line file.
// 2. An omitted (or `null`) `new_str` deletes `old_str`, as the tool's definition has it; the
//    TypeScript tool writes the word "undefined" in its place.

import { MAX_DESCRIPTION_RUNES } from "../../store/limits.ts";
import { quote } from "../../store/text.ts";

/**
 * A command refused or failed, with the outcome its span records. The SDK sends the message to
 * the model as an `is_error` tool result.
 */
export class CommandError extends Error {
  /** The outcome on the command's span: a store error code, or `"refused"`. */
  readonly outcome: string;

  /**
   * @param message What the model reads.
   * @param outcome The outcome on the command's span.
   */
  constructor(message: string, outcome = "refused") {
    super(message);
    this.name = "CommandError";
    this.outcome = outcome;
  }
}

/**
 * The description a file gets from its text: its first non-blank line, without a Markdown
 * heading's `#` marks, on one line, cut to the description limit. A file with no such line is
 * described as such.
 */
export function describeText(text: string): string {
  const first = text.split("\n").find((line) => line.trim() !== "") ?? "";
  const line = first.toWellFormed().normalize("NFC")
    // deno-lint-ignore no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, " ")
    .replace(/^\s*#+\s*/, "").replace(/\s+/g, " ").trim();
  if (line === "") return "Memory file (no text yet)";
  const runes = Array.from(line);
  return runes.length <= MAX_DESCRIPTION_RUNES
    ? line
    : `${runes.slice(0, MAX_DESCRIPTION_RUNES - 1).join("").trimEnd()}…`;
}

/**
 * `str_replace`: `oldStr` must occur exactly once in the whole text (occurrences counted without
 * overlap, as Python's `str.count` does; it may span lines); it is replaced by `newStr`. Returns
 * the new text and the 1-based line where the replacement starts.
 */
export function strReplace(path: string, text: string, oldStr: string, newStr: string): {
  text: string;
  line: number;
} {
  const at = text.indexOf(oldStr);
  if (at < 0) {
    throw new CommandError(
      `No replacement was performed, old_str ${quote(oldStr)} did not appear verbatim in ${path}.`,
    );
  }
  const again = oldStr === "" ? text !== "" : text.indexOf(oldStr, at + oldStr.length) >= 0;
  if (again) {
    throw new CommandError(
      `No replacement was performed. Multiple occurrences of old_str ${quote(oldStr)} in ` +
        `lines: ${occurrenceLines(text, oldStr).join(", ")}. Please ensure it is unique`,
    );
  }
  return {
    text: text.slice(0, at) + newStr + text.slice(at + oldStr.length),
    line: lineAt(text, at),
  };
}

// The 1-based line of the character at `index`.
function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

// The lines where `oldStr` starts, each once (every line, for an empty `oldStr`).
function occurrenceLines(text: string, oldStr: string): number[] {
  if (oldStr === "") return text.split("\n").map((_, i) => i + 1);
  const lines = new Set<number>();
  for (let i = text.indexOf(oldStr); i >= 0; i = text.indexOf(oldStr, i + oldStr.length)) {
    lines.add(lineAt(text, i));
  }
  return [...lines];
}

/** The SDK tool's `insert`: `insertText` (less one trailing LF) becomes line `insertLine + 1`. */
export function insertAt(
  text: string,
  insertLine: number,
  insertText: string,
): string {
  const lines = text.split("\n");
  if (insertLine < 0 || insertLine > lines.length) {
    throw new CommandError(
      `Invalid \`insert_line\` parameter: ${insertLine}. It should be within the range of ` +
        `lines of the file: [0, ${lines.length}]`,
    );
  }
  lines.splice(insertLine, 0, insertText.replace(/\n$/, ""));
  return lines.join("\n");
}

/** A size as the SDK tool shows it: `0B`, `512B`, `1.5K`, `64K`. */
export function formatSize(bytes: number): string {
  if (bytes === 0) return "0B";
  const units = ["B", "K", "M", "G"];
  const i = Math.min(units.length - 1, Math.floor(Math.log(bytes) / Math.log(1024)));
  const size = bytes / 1024 ** i;
  return (size % 1 === 0 ? String(size) : size.toFixed(1)) + units[i];
}

/**
 * The lines `view_range` selects, as the SDK tool reads it: `[start, end]` 1-based and inclusive,
 * `end` -1 for the last line; anything but two numbers shows every line.
 */
export function viewRange(
  lines: readonly string[],
  range: unknown,
): { lines: readonly string[]; first: number } {
  if (!Array.isArray(range) || range.length !== 2) return { lines, first: 1 };
  const [from, to] = range as [number, number];
  const start = Math.max(1, from) - 1;
  const end = to === -1 ? lines.length : to;
  return { lines: lines.slice(start, end), first: start + 1 };
}
