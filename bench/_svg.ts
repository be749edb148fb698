// The scaling chart: total ops/s against processes, one panel per operation, one line per
// target. Plain SVG written by hand, no dependency.

import type { Op, TargetName } from "./_protocol.ts";
import type { Results, SweepRow } from "./_results.ts";

const PANEL_W = 300;
const PANEL_H = 230;
const MARGIN = { left: 62, right: 14, top: 34, bottom: 40 };
const LEGEND_H = 44;
const TITLE_H = 30;
const OPS: readonly Op[] = ["create", "update", "read"];

const STYLE: Record<TargetName, { color: string; dash: string; label: string }> = {
  "file": { color: "#1f5fbf", dash: "", label: "file (library)" },
  "file-raw": { color: "#1f5fbf", dash: "6 4", label: "file raw atomic write" },
  "file-wfa": { color: "#6fa8ff", dash: "2 3", label: "write-file-atomic" },
  "jetstream": { color: "#d9661f", dash: "", label: "jetstream (library)" },
  "jetstream-raw": { color: "#d9661f", dash: "6 4", label: "raw @nats-io/kv" },
};

/** The chart as an SVG document, or `undefined` when the run had no sweep. */
export function scalingSvg(results: Results): string | undefined {
  const rows = results.summary.sweep;
  const ops = OPS.filter((op) => rows.some((r) => r.op === op));
  if (ops.length === 0) return undefined;
  const counts = [...new Set(rows.map((r) => r.processes))].sort((a, b) => a - b);
  const targets = (Object.keys(STYLE) as TargetName[]).filter((t) =>
    rows.some((r) => r.target === t)
  );
  const width = PANEL_W * ops.length;
  const height = TITLE_H + PANEL_H + LEGEND_H;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="20" text-anchor="middle" font-size="14" font-weight="600">` +
    `${
      esc(`Throughput against processes (${keyspaceOf(results)} keyspace, median of trials)`)
    }</text>`,
  ];
  ops.forEach((op, i) => {
    parts.push(panel(op, rows.filter((r) => r.op === op), counts, targets, i * PANEL_W, TITLE_H));
  });
  parts.push(legend(targets, width, TITLE_H + PANEL_H + 8));
  parts.push(`</svg>`);
  return parts.join("\n") + "\n";
}

function panel(
  op: Op,
  rows: readonly SweepRow[],
  counts: readonly number[],
  targets: readonly TargetName[],
  x0: number,
  y0: number,
): string {
  const left = x0 + MARGIN.left;
  const right = x0 + PANEL_W - MARGIN.right;
  const top = y0 + MARGIN.top;
  const bottom = y0 + PANEL_H - MARGIN.bottom;
  const max = Math.max(1, ...rows.map((r) => r.opsPerSec));
  const { step, top: yMax } = niceScale(max);
  const x = (c: number) => {
    if (counts.length === 1) return (left + right) / 2;
    const i = counts.indexOf(c);
    return left + (i / (counts.length - 1)) * (right - left);
  };
  const y = (v: number) => bottom - (v / yMax) * (bottom - top);
  const out: string[] = [`<g>`];
  out.push(
    `<text x="${(left + right) / 2}" y="${
      y0 + 20
    }" text-anchor="middle" font-size="12" font-weight="600">${op}</text>`,
  );
  for (let v = 0; v <= yMax + step / 2; v += step) {
    const yy = y(v).toFixed(1);
    out.push(
      `<line x1="${left}" x2="${right}" y1="${yy}" y2="${yy}" stroke="#e3e3e3" stroke-width="1"/>`,
      `<text x="${left - 6}" y="${yy}" dy="0.32em" text-anchor="end" fill="#555">${
        fmtTick(v)
      }</text>`,
    );
  }
  out.push(
    `<line x1="${left}" x2="${right}" y1="${bottom}" y2="${bottom}" stroke="#888" stroke-width="1"/>`,
  );
  for (const c of counts) {
    out.push(
      `<text x="${x(c).toFixed(1)}" y="${
        bottom + 15
      }" text-anchor="middle" fill="#555">${c}</text>`,
    );
  }
  out.push(
    `<text x="${(left + right) / 2}" y="${
      bottom + 31
    }" text-anchor="middle" fill="#333">processes</text>`,
    `<text transform="translate(${x0 + 14} ${
      (top + bottom) / 2
    }) rotate(-90)" text-anchor="middle" fill="#333">ops/s</text>`,
  );
  for (const target of targets) {
    const points = counts
      .map((c) => rows.find((r) => r.target === target && r.processes === c))
      .filter((r): r is SweepRow => r !== undefined)
      .map((r) => [x(r.processes), y(r.opsPerSec)] as const);
    if (points.length === 0) continue;
    const s = STYLE[target];
    out.push(
      `<polyline fill="none" stroke="${s.color}" stroke-width="2"${
        s.dash ? ` stroke-dasharray="${s.dash}"` : ""
      } points="${points.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(" ")}"/>`,
    );
    for (const [px, py] of points) {
      out.push(
        `<circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="2.8" fill="${s.color}"/>`,
      );
    }
  }
  out.push(`</g>`);
  return out.join("\n");
}

function legend(targets: readonly TargetName[], width: number, y0: number): string {
  const itemW = 180;
  const perRow = Math.max(1, Math.floor(width / itemW));
  const out: string[] = [`<g>`];
  targets.forEach((target, i) => {
    const s = STYLE[target];
    const row = Math.floor(i / perRow);
    const inRow = Math.min(perRow, targets.length - row * perRow);
    const x = (width - inRow * itemW) / 2 + (i % perRow) * itemW;
    const y = y0 + row * 18 + 8;
    out.push(
      `<line x1="${x}" x2="${x + 26}" y1="${y}" y2="${y}" stroke="${s.color}" stroke-width="2"${
        s.dash ? ` stroke-dasharray="${s.dash}"` : ""
      }/>`,
      `<text x="${x + 32}" y="${y}" dy="0.32em" fill="#333">${esc(s.label)}</text>`,
    );
  });
  out.push(`</g>`);
  return out.join("\n");
}

// A tick step of 1, 2 or 5 times a power of ten giving about five gridlines.
function niceScale(max: number): { step: number; top: number } {
  const rough = max / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power;
  return { step, top: Math.ceil(max / step) * step };
}

function fmtTick(v: number): string {
  if (v >= 1000) return `${(v / 1000).toFixed(v % 1000 === 0 ? 0 : 1)}k`;
  return String(Math.round(v * 100) / 100);
}

function keyspaceOf(results: Results): string {
  return String((results.config as { sweepKeyspace?: unknown }).sweepKeyspace ?? "");
}

function esc(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
