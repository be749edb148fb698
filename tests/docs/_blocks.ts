// The code of a Markdown page, in the order a reader meets it: TypeScript blocks, and the
// `agentmem` lines of shell blocks (what docs_test.ts runs).

/** One block of a page: TypeScript source, or the shell lines it runs. */
export type Block =
  | { readonly kind: "ts"; readonly line: number; readonly source: string }
  | { readonly kind: "sh"; readonly line: number; readonly commands: readonly string[] };

/** The page's TypeScript blocks and shell blocks, in order. */
export function blocksOf(markdown: string): Block[] {
  const blocks: Block[] = [];
  for (const m of markdown.matchAll(/^```([a-z]*)[^\n]*\n([\s\S]*?)^```$/gm)) {
    const line = markdown.slice(0, m.index).split("\n").length;
    const [, lang, body] = m as unknown as [string, string, string];
    if (lang === "ts" || lang === "typescript") blocks.push({ kind: "ts", line, source: body });
    else if (lang === "sh" || lang === "bash" || lang === "shell") {
      blocks.push({ kind: "sh", line, commands: commandsOf(body) });
    }
  }
  return blocks;
}

// The commands of a shell block: continuation lines joined, comments and blank lines left out.
function commandsOf(body: string): string[] {
  const joined = body.replace(/\\\n\s*/g, "");
  return joined.split("\n").map((l) => withoutComment(l).trim()).filter((l) => l !== "");
}

// A line without its trailing `# comment` (a `#` outside quotes, after a space).
function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "#" && (i === 0 || line[i - 1] === " ")) return line.slice(0, i);
  }
  return line;
}
