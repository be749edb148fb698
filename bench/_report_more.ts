// The tables of bench/micro.ts and bench/peers.ts, as Markdown.

import { fmtRate, table } from "./_report.ts";
import type { Results } from "./_results.ts";
import type { MicroRow } from "./micro.ts";

const OPS = ["create", "read", "update", "list", "delete"] as const;

function fmtValue(row: MicroRow, v: number): string {
  if (row.unit === "ops/s") return fmtRate(v);
  return v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(v >= 10 ? 1 : 2);
}

/** One table per micro section: medians and the within-trial ratio. */
export function microTables(results: Results): string {
  const rows = results.micro?.rows ?? [];
  if (rows.length === 0) return "";
  const body = rows.map((r) => [
    `${r.backend} ${r.section}`,
    Object.entries(r.values).filter(([k]) => !k.startsWith("ratio"))
      .map(([k, v]) => `${k}: ${fmtValue(r, v)}`).join("; "),
    r.unit,
    `${r.ratio.median.toFixed(2)}x`,
    `${r.ratio.min.toFixed(2)}–${r.ratio.max.toFixed(2)}`,
    r.ratio.of,
  ]);
  return [
    "### Single-process measurements (bench/micro.ts, medians; ratios taken within each trial)",
    "",
    table(["measure", "medians", "unit", "ratio", "trials", "ratio of"], body, [
      false,
      false,
      false,
      true,
      true,
      false,
    ]),
    "",
  ].join("\n");
}

/** The peers table (ops/s per size and process count) and the lost-update table. */
export function peersTables(results: Results): string {
  const peers = results.peers;
  if (peers === undefined || peers.rows.length === 0) return "";
  const out: string[] = [];
  const sizes = [...new Set(peers.rows.map((r) => r.n))];
  const systems = [...new Set(peers.rows.map((r) => r.system))];
  for (const n of sizes) {
    for (const processes of [1, 4]) {
      const at = peers.rows.filter((r) => r.n === n && r.processes === processes);
      if (at.length === 0) continue;
      out.push(
        `### Peers: ${n} keys of 1 KiB, ${processes} process${
          processes > 1 ? "es" : ""
        } (ops/s, median of ${at[0]!.trials ?? 1})`,
        "",
        table(
          ["system", ...OPS, "kept after create"],
          systems.map((system) => {
            const cell = (op: string) => {
              const r = at.find((x) => x.system === system && x.op === op);
              if (r === undefined) return "";
              return fmtRate(r.opsPerSec) + (r.failed > 0 ? ` (${r.failed} failed)` : "");
            };
            const kept = at.find((x) => x.system === system && x.op === "list")?.kept;
            return [system, ...OPS.map(cell), kept === undefined ? "" : `${kept} of ${n}`];
          }),
          [false, true, true, true, true, true, true],
        ),
        "",
      );
    }
  }
  if (peers.lost.length > 0) {
    const first = peers.lost[0]!;
    out.push(
      `### Lost updates: ${first.processes} processes x ${
        first.increments / first.processes
      } read-modify-write increments of one key`,
      "",
      table(
        ["system", "increments", "counter at the end", "lost", "conflicts retried"],
        peers.lost.map((l) => [
          l.system,
          String(l.increments),
          String(l.final),
          String(l.lost),
          String(l.retries),
        ]),
        [false, true, true, true, true],
      ),
      "",
    );
  }
  return out.join("\n");
}
