// How the benchmark writes numbers, tables and progress: the one Markdown table renderer.

type Rows = readonly (readonly string[])[];

/**
 * A Markdown table. `header` names the columns, separated by `|`; a name ending in `:` is a
 * right-aligned column (the `:` is not shown).
 */
export function table(header: string, rows: Rows): string {
  const names = header.split("|").map((h) => h.replace(/:$/, ""));
  const right = header.split("|").map((h) => h.endsWith(":"));
  const widths = names.map((n, i) => Math.max(n.length, ...rows.map((r) => (r[i] ?? "").length)));
  const pad = (text = "", i: number) =>
    right[i] ? text.padStart(widths[i] ?? 0) : text.padEnd(widths[i] ?? 0);
  const line = (cells: readonly string[]) =>
    `| ${names.map((_, i) => pad(cells[i], i)).join(" | ")} |`;
  const rule = widths.map((w, i) => right[i] ? `${"-".repeat(w + 1)}:` : "-".repeat(w + 2));
  return [line(names), `|${rule.join("|")}|`, ...rows.map(line)].join("\n");
}

/** A table under a `###` heading, followed by a blank line. */
export function section(title: string, header: string, rows: Rows): string {
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

/** A byte count: 1024 → "1 KiB", 65536 → "64 KiB", 1536 → "1.5 KiB", 100 → "100 B". */
export function fmtBytes(n: number): string {
  const [unit, size] = n >= 1 << 20 ? ["MiB", 1 << 20] : n >= 1024 ? ["KiB", 1024] : ["B", 1];
  return `${(n / size).toFixed(n % size === 0 ? 0 : 1)} ${unit}`;
}

/** A ratio and its per-trial range: `1.02x (trials 0.75–1.22)`. */
export function fmtSpread({ median, min, max }: Record<"median" | "min" | "max", number>): string {
  return `${median.toFixed(2)}x (trials ${min.toFixed(2)}–${max.toFixed(2)})`;
}

const TERMINAL = Deno.stderr.isTerminal();

/** Shows `text` on the terminal's last line (nothing when stderr is not a terminal). */
export function progress(text: string): void {
  if (!TERMINAL) return;
  const width = Math.max(10, Deno.consoleSize().columns - 1);
  Deno.stderr.writeSync(new TextEncoder().encode(`\r\x1b[K${text.slice(0, width)}`));
}
