// The benchmark's tables, as Markdown: printed on stdout and embedded in BENCH.md.

import type { Op, TargetName } from "./_protocol.ts";
import type { Results } from "./_results.ts";
import type { ListRow, MainRow, TargetRow } from "./_summary.ts";
import type { MicroRow } from "./micro.ts";
import { fmtBytes, fmtMs, fmtRate, sizeLabel, table } from "./_format.ts";

const OP_ORDER: readonly Op[] = ["create", "update", "read", "counter", "delete"];
const TARGET_ORDER: readonly TargetName[] = ["file", "file-raw", "jetstream", "jetstream-raw"];
const PEER_OPS = ["create", "read", "update", "list", "delete"] as const;

/** Everything a run reports, as Markdown (the `deno task bench` stdout). */
export function renderText(results: Results): string {
  const m = results.machine;
  return [
    `# agentmem benchmark\n\n\`${results.command}\` — ${m.cores} cores, ${m.cpu}, Deno ${m.deno}, nats-server ${m.natsServer}, ${
      (results.durationMs / 1000).toFixed(0)
    } s`,
    operationsTables(results),
    listTable(results),
    microTables(results),
    peersTables(results),
    "### Targets",
    targetsTable(results.summary.targets),
    "### Invariants",
    invariantsText(results),
    ...(results.notes.length > 0 ? ["### Notes", ...results.notes.map((n) => `- ${n}`)] : []),
  ].filter((s) => s !== "").join("\n\n").replace(/\n{3,}/g, "\n\n");
}

/** One table of operations per keyspace. */
export function operationsTables(results: Results): string {
  const { summary, config } = results;
  const byTargetThenOp = (a: MainRow, b: MainRow) =>
    TARGET_ORDER.indexOf(a.target) - TARGET_ORDER.indexOf(b.target) ||
    OP_ORDER.indexOf(a.op) - OP_ORDER.indexOf(b.op);
  const vsBaseline = (row: MainRow) =>
    summary.ratios.filter((r) =>
      r.keyspace === row.keyspace && r.target === row.target && r.op === row.op
    )
      .map((r) => `${r.ratio.toFixed(2)}x ${r.baseline}`).join(", ");
  const count = (n: number) => Number.isFinite(n) ? String(Math.round(n)) : "";
  return [...new Set(summary.main.map((r) => r.keyspace))].map((keyspace) => {
    const rows = summary.main.filter((r) => r.keyspace === keyspace).sort(byTargetThenOp);
    const first = rows[0] as MainRow;
    const keys = keyspace === "contended"
      ? `${config.keys} keys shared by all`
      : `${config.keys} keys per process`;
    return `### Operations: ${keyspace} (${first.processes} processes, ${keys}, ${config.valueSize} B values, median of ${first.trials} trial(s))\n\n${
      table(
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
          r.target.endsWith("-raw") ? "" : vsBaseline(r),
          fmtMs(r.p50Ms),
          fmtMs(r.p95Ms),
          fmtMs(r.p99Ms),
          count(r.exists),
          count(r.stale),
          count(r.retries),
        ]),
        [false, false, true, false, true, true, true, true, true, true],
      )
    }\n`;
  }).join("\n");
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
  const body = rows.map((r) => {
    const lib = library(r);
    return [
      sizeLabel(r.valueSize),
      r.method,
      fmtMs(r.ms),
      lib === undefined || r.method === r.backend ? "" : `${(r.ms / lib).toFixed(2)}x`,
      r.bytesRead < 0 ? "" : fmtBytes(r.bytesRead),
      r.bytesRead < 0 ? "" : fmtBytes(Math.round(r.bytesPerEntry)),
    ];
  });
  const header = ["bodies", "method", "time ms", "time / library's", "bytes read", "bytes/entry"];
  return `### Listing ${first.entries} entries (one process, median of ${first.reps})\n\n${
    table(header, body, [true, false, true, true, true, true])
  }\n\nBytes read: the worker's \`rchar\` from \`/proc/self/io\` during the listing (file backend only).\n`;
}

/** One table for bench/micro.ts: medians and the within-trial ratio of each measure. */
export function microTables(results: Results): string {
  const rows = results.micro?.rows ?? [];
  if (rows.length === 0) return "";
  const value = (row: MicroRow, v: number) =>
    row.unit === "ops/s" || v >= 100 ? fmtRate(v) : v.toFixed(v >= 10 ? 1 : 2);
  const body = rows.map((r) => [
    `${r.backend} ${r.section}`,
    Object.entries(r.values).filter(([k]) => !k.startsWith("ratio")).map(([k, v]) =>
      `${k}: ${value(r, v)}`
    )
      .join("; "),
    r.unit,
    `${r.ratio.median.toFixed(2)}x`,
    `${r.ratio.min.toFixed(2)}–${r.ratio.max.toFixed(2)}`,
    r.ratio.of,
  ]);
  const header = ["measure", "medians", "unit", "ratio", "trials", "ratio of"];
  return `### Single-process measurements (bench/micro.ts, medians; ratios taken within each trial)\n\n${
    table(header, body, [false, false, false, true, true, false])
  }\n`;
}

/** The peers tables (ops/s per size and process count) and the lost-update table. */
export function peersTables(results: Results): string {
  const peers = results.peers;
  if (peers === undefined || peers.rows.length === 0) return "";
  const out: string[] = [];
  const systems = [...new Set(peers.rows.map((r) => r.system))];
  for (const n of new Set(peers.rows.map((r) => r.n))) {
    for (const processes of [1, 4]) {
      const at = peers.rows.filter((r) => r.n === n && r.processes === processes);
      if (at.length === 0) continue;
      const cell = (system: string, op: string) => {
        const r = at.find((x) => x.system === system && x.op === op);
        return r === undefined
          ? ""
          : fmtRate(r.opsPerSec) + (r.failed > 0 ? ` (${r.failed} failed)` : "");
      };
      const body = systems.map((system) => {
        const kept = at.find((x) => x.system === system && x.op === "list")?.kept;
        return [
          system,
          ...PEER_OPS.map((op) => cell(system, op)),
          kept === undefined ? "" : `${kept} of ${n}`,
        ];
      });
      out.push(
        `### Peers: ${n} keys of 1 KiB, ${processes} process${
          processes > 1 ? "es" : ""
        } (ops/s, median of ${at[0]?.trials ?? 1})\n\n${
          table(["system", ...PEER_OPS, "kept after create"], body, [
            false,
            ...PEER_OPS.map(() => true),
            true,
          ])
        }\n`,
      );
    }
  }
  const first = peers.lost[0];
  if (first !== undefined) {
    const body = peers.lost.map((
      l,
    ) => [l.system, ...[l.increments, l.final, l.lost, l.retries].map(String)]);
    out.push(
      `### Lost updates: ${first.processes} processes x ${
        first.increments / first.processes
      } read-modify-write increments of one key\n\n${
        table(["system", "increments", "counter at the end", "lost", "conflicts retried"], body, [
          false,
          true,
          true,
          true,
          true,
        ])
      }\n`,
    );
  }
  return out.join("\n");
}

/** The targets as a Markdown table. */
export function targetsTable(targets: readonly TargetRow[]): string {
  const result = (t: TargetRow) =>
    t.met === null
      ? (t.measured === "not measured" ? "not measured" : "reported")
      : t.met
      ? "met"
      : "**MISSED**";
  return table(
    ["target", "measured", "result"],
    targets.map((t) => [t.goal, t.measured, result(t)]),
  );
}

/** How many invariant checks ran, and any that broke. */
export function invariantsText(results: Results): string {
  const { checks, violations } = results.invariants;
  if (violations.length === 0) {
    return `All ${checks} invariant checks held (one create winner per key, one delete winner per key, no lost increment, no torn read, the store lists exactly the keys written).`;
  }
  return `**${violations.length} of ${checks} invariant checks BROKE:**\n\n${
    violations.map((v) => `- ${v}`).join("\n")
  }`;
}
