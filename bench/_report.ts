// The benchmark's tables, as Markdown: printed on stdout and embedded in BENCH.md.

import type { Op, TargetName } from "./_protocol.ts";
import { TRAITS } from "./_protocol.ts";
import { type ListRow, type MainRow, type Results, sizeLabel, type TargetRow } from "./_results.ts";
import { microTables, peersTables } from "./_report_more.ts";

const OP_ORDER: readonly Op[] = ["create", "update", "read", "counter", "delete"];
const TARGET_ORDER: readonly TargetName[] = [
  "file",
  "file-raw",
  "jetstream",
  "jetstream-raw",
];

/** Everything a run reports, as Markdown (the `deno task bench` stdout). */
export function renderText(results: Results): string {
  const m = results.machine;
  return [
    `# agentmem benchmark`,
    "",
    `\`${results.command}\` — ${m.cores} cores, ${m.cpu}, Deno ${m.deno}, nats-server ${m.natsServer}` +
    `, ${(results.durationMs / 1000).toFixed(0)} s`,
    "",
    renderTables(results),
  ].join("\n");
}

/** The operations, listing, micro, peers, targets and invariants tables. */
export function renderTables(results: Results): string {
  const out: string[] = [];
  out.push(operationsTables(results));
  out.push(listTable(results));
  out.push(microTables(results), peersTables(results));
  out.push("### Targets", "", targetsTable(results.summary.targets), "");
  out.push("### Invariants", "", invariantsText(results), "");
  if (results.notes.length > 0) {
    out.push("### Notes", "", ...results.notes.map((n) => `- ${n}`), "");
  }
  return out.filter((s) => s !== "").join("\n\n").replace(/\n{3,}/g, "\n\n");
}

/** One table of operations per keyspace. */
export function operationsTables(results: Results): string {
  const { summary, config } = results;
  const out: string[] = [];
  const keyspaces = [...new Set(summary.main.map((r) => r.keyspace))];
  for (const keyspace of keyspaces) {
    const rows = summary.main.filter((r) => r.keyspace === keyspace).sort(byTargetThenOp);
    const first = rows[0];
    if (first === undefined) continue;
    const keys = keyspace === "contended"
      ? `${config.keys} keys shared by all`
      : `${config.keys} keys per process`;
    out.push(
      `### Operations: ${keyspace} (${first.processes} processes, ${keys}, ${config.valueSize} B values, median of ${first.trials} trial(s))`,
    );
    out.push("");
    out.push(table(
      [
        "target",
        "op",
        "ops/s",
        "vs baseline",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "exists",
        "stale",
        "retries",
      ],
      rows.map((r) => [
        r.target,
        r.op,
        fmtRate(r.opsPerSec),
        vsBaseline(results, r),
        fmtMs(r.p50Ms),
        fmtMs(r.p95Ms),
        fmtMs(r.p99Ms),
        fmtCount(r.exists),
        fmtCount(r.stale),
        fmtCount(r.retries),
      ]),
      [false, false, true, false, true, true, true, true, true, true],
    ));
    out.push("");
  }
  return out.join("\n");
}

function vsBaseline(results: Results, row: MainRow): string {
  if (!TRAITS[row.target].library) return "";
  return results.summary.ratios
    .filter((r) => r.keyspace === row.keyspace && r.target === row.target && r.op === row.op)
    .map((r) => `${r.ratio.toFixed(2)}x ${r.baseline}`)
    .join(", ");
}

function byTargetThenOp(a: MainRow, b: MainRow): number {
  return TARGET_ORDER.indexOf(a.target) - TARGET_ORDER.indexOf(b.target) ||
    OP_ORDER.indexOf(a.op) - OP_ORDER.indexOf(b.op);
}

/** The listing table. */
export function listTable(results: Results): string {
  const rows = [...results.summary.list].sort((a, b) =>
    a.valueSize - b.valueSize || a.backend.localeCompare(b.backend)
  );
  const first = rows[0];
  if (first === undefined) return "";
  const library = (r: ListRow) =>
    rows.find((l) => l.valueSize === r.valueSize && l.method === r.backend)?.ms;
  return [
    `### Listing ${first.entries} entries (one process, median of ${first.reps})`,
    "",
    table(
      ["bodies", "method", "time ms", "time / library's", "bytes read", "bytes/entry"],
      rows.map((r) => {
        const lib = library(r);
        return [
          sizeLabel(r.valueSize),
          r.method,
          fmtMs(r.ms),
          lib === undefined || r.method === r.backend ? "" : `${(r.ms / lib).toFixed(2)}x`,
          r.bytesRead < 0 ? "" : fmtBytes(r.bytesRead),
          r.bytesRead < 0 ? "" : fmtBytes(Math.round(r.bytesPerEntry)),
        ];
      }),
      [true, false, true, true, true, true],
    ),
    "",
    "Bytes read: the worker's `rchar` from `/proc/self/io` during the listing (file backend only).",
    "",
  ].join("\n");
}

/** The targets as a Markdown table. */
export function targetsTable(targets: readonly TargetRow[]): string {
  return table(
    ["target", "measured", "result"],
    targets.map((t) => [
      t.goal,
      t.measured,
      t.met === null
        ? (t.measured === "not measured" ? "not measured" : "reported")
        : t.met
        ? "met"
        : "**MISSED**",
    ]),
  );
}

/** How many invariant checks ran, and any that broke. */
export function invariantsText(results: Results): string {
  const { checks, violations } = results.invariants;
  if (violations.length === 0) {
    return `All ${checks} invariant checks held (one create winner per key, one delete winner per key, no lost increment, no torn read, the store lists exactly the keys written).`;
  }
  return [
    `**${violations.length} of ${checks} invariant checks BROKE:**`,
    "",
    ...violations.map((v) => `- ${v}`),
  ].join("\n");
}

/** A Markdown table; `right[i]` right-aligns column i. */
export function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  right: readonly boolean[] = [],
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const pad = (cell: string, i: number) =>
    right[i] ? cell.padStart(widths[i] as number) : cell.padEnd(widths[i] as number);
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => pad(c, i)).join(" | ")} |`;
  const rule = `|${
    widths.map((w, i) => right[i] ? `${"-".repeat(w + 1)}:` : `${"-".repeat(w + 2)}`).join("|")
  }|`;
  return [line(header), rule, ...rows.map((r) => line(header.map((_, i) => r[i] ?? "")))].join(
    "\n",
  );
}

/** ops/s for a table cell. */
export function fmtRate(n: number): string {
  if (!Number.isFinite(n)) return "";
  return n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(1);
}

function fmtMs(n: number): string {
  if (!Number.isFinite(n)) return "";
  if (n >= 100) return n.toFixed(0);
  if (n >= 10) return n.toFixed(1);
  if (n >= 1) return n.toFixed(2);
  return n.toFixed(3);
}

function fmtCount(n: number): string {
  return Number.isFinite(n) ? String(Math.round(n)) : "";
}

function fmtBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(n % 1024 === 0 ? 0 : 1)} KiB`;
  return `${n} B`;
}
