// How the benchmark writes numbers, tables and progress: the one Markdown table renderer.

/**
 * A Markdown table. `header` names the columns, separated by `|`; a name ending in `:` is a
 * right-aligned column (the `:` is not shown).
 */
export function table(header: string, rows: readonly (readonly string[])[]): string {
  const columns = header.split("|").map((h) => ({
    name: h.replace(/:$/, ""),
    right: h.endsWith(":"),
  }));
  const widths = columns.map((c, i) =>
    Math.max(c.name.length, ...rows.map((r) => (r[i] ?? "").length))
  );
  const cell = (text: string, i: number) =>
    columns[i]?.right ? text.padStart(widths[i] as number) : text.padEnd(widths[i] as number);
  const line = (cells: readonly string[]) =>
    `| ${columns.map((_, i) => cell(cells[i] ?? "", i)).join(" | ")} |`;
  const rule = widths.map((w, i) =>
    columns[i]?.right ? `${"-".repeat(w + 1)}:` : "-".repeat(w + 2)
  );
  return [line(columns.map((c) => c.name)), `|${rule.join("|")}|`, ...rows.map(line)].join("\n");
}

/** A table under a `###` heading, followed by a blank line. */
export function section(
  title: string,
  header: string,
  rows: readonly (readonly string[])[],
): string {
  return `### ${title}\n\n${table(header, rows)}\n`;
}

/** ops/s for a table cell. */
export function fmtRate(n: number): string {
  if (!Number.isFinite(n)) return "";
  return n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(1);
}

/** Milliseconds for a table cell, to about three significant digits. */
export function fmtMs(n: number): string {
  if (!Number.isFinite(n)) return "";
  return n.toFixed(n >= 100 ? 0 : n >= 10 ? 1 : n >= 1 ? 2 : 3);
}

/** A byte count for a table cell. */
export function fmtBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(n % 1024 === 0 ? 0 : 1)} KiB`;
  return `${n} B`;
}

/** 1024 → "1 KiB", 65536 → "64 KiB", 100 → "100 B". */
export function sizeLabel(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} B`;
}

/** A ratio and its per-trial range: `1.02x (trials 0.75–1.22)`. */
export function fmtSpread(r: { median: number; min: number; max: number }, digits = 2): string {
  return `${r.median.toFixed(digits)}x (trials ${r.min.toFixed(digits)}–${r.max.toFixed(digits)})`;
}

const TERMINAL = Deno.stderr.isTerminal();

/** Shows `text` on the terminal's last line (nothing when stderr is not a terminal). */
export function progress(text: string): void {
  if (!TERMINAL) return;
  let width = 100;
  try {
    width = Deno.consoleSize().columns;
  } catch {
    // not a console after all
  }
  Deno.stderr.writeSync(
    new TextEncoder().encode(`\r\x1b[K${text.slice(0, Math.max(10, width - 1))}`),
  );
}
