// The benchmark's tables, as Markdown (printed on stdout and embedded in BENCH.md); BENCH.md from
// a run's results, and `deno task bench:report [results.json]`, which re-renders it from a saved
// file. The page is bench/template.md with its `{{name}}` fields filled, and bench/summary.md; the
// generated files go through `deno fmt`, so `deno fmt --check` passes.

import { fmtBytes, fmtMs, fmtRate, section, table } from "./_format.ts";
import {
  type ConsoleResults,
  type MainRow,
  type Results,
  summarize,
  type TargetRow,
} from "./summarize.ts";
import type { PeerRow } from "./peers.ts";
import { reviewSection } from "./_review_report.ts";

const OPS = "target|op|ops/s:|vs baseline|p50 ms:|p95 ms:|p99 ms:|exists:|stale:|retries:";
const LIST = "bodies:|method|time ms:|time / library's:|bytes read:|bytes/entry:";
const MICRO = "measure|medians|unit|ratio:|trials:|ratio of";
const PEERS = "system|create:|read:|update:|list:|delete:|kept after create:";
const LOST = "system|increments:|counter at the end:|lost:|conflicts retried:";
const TARGETS = ["file", "file-raw", "jetstream", "jetstream-raw"];
const OP_ORDER = ["create", "update", "read", "counter", "delete"];
const PEER_OPS = ["create", "read", "update", "list", "delete"];
const HELD = "one create winner per key, one delete winner per key, no lost increment, " +
  "no torn read, the store lists exactly the keys written";
const ROOT = new URL("../", import.meta.url);
const SAVED = new URL("results.json", import.meta.url).pathname;

/** Everything a run reports, as Markdown (the `deno task bench` stdout). */
export function renderText(results: Results): string {
  const { machine: m, command, durationMs, notes } = results;
  const about = `${m.cores} cores, ${m.cpu}, Deno ${m.deno}, nats-server ${m.natsServer}`;
  return [
    `# agentmem benchmark\n\n\`${command}\` — ${about}, ${(durationMs / 1000).toFixed(0)} s`,
    operationsTables(results),
    listTable(results),
    microTables(results),
    peersTables(results),
    "### Targets",
    targetsTable(results.summary.targets),
    "### Invariants",
    invariantsText(results),
    ...(notes.length > 0 ? ["### Notes", ...notes.map((n) => `- ${n}`)] : []),
  ].filter((s) => s !== "").join("\n\n").replace(/\n{3,}/g, "\n\n");
}

/** One table of operations per keyspace. */
export function operationsTables({ summary, config }: Results): string {
  const rank = (r: MainRow) => TARGETS.indexOf(r.target) * 10 + OP_ORDER.indexOf(r.op);
  const key = (r: Pick<MainRow, "keyspace" | "target" | "op">) =>
    `${r.keyspace}|${r.target}|${r.op}`;
  const vsFloor = (row: MainRow) =>
    summary.ratios.filter((r) => key(r) === key(row)).map((r) =>
      `${r.ratio.toFixed(2)}x ${r.baseline}`
    );
  const count = (n: number) => Number.isFinite(n) ? String(Math.round(n)) : "";
  const keyspaces = [...new Set(summary.main.map((r) => r.keyspace))];
  return keyspaces.map((keyspace) => {
    const rows = summary.main.filter((r) => r.keyspace === keyspace);
    rows.sort((a, b) => rank(a) - rank(b));
    const { processes, trials } = rows[0] as MainRow;
    const shared = keyspace === "contended" ? "shared by all" : "per process";
    const about = `${processes} processes, ${config.keys} keys ${shared}, ` +
      `${config.valueSize} B values, median of ${trials} trial(s)`;
    const body = rows.map((r) => [
      r.target,
      r.op,
      fmtRate(r.opsPerSec),
      r.target.endsWith("-raw") ? "" : vsFloor(r).join(", "),
      ...[r.p50Ms, r.p95Ms, r.p99Ms].map(fmtMs),
      ...[r.exists, r.stale, r.retries].map(count),
    ]);
    return section(`Operations: ${keyspace} (${about})`, OPS, body);
  }).join("\n");
}

/** The listing table. */
export function listTable(results: Results): string {
  const rows = [...results.summary.list];
  rows.sort((a, b) => a.valueSize - b.valueSize || a.backend.localeCompare(b.backend));
  const first = rows[0];
  if (first === undefined) return "";
  const body = rows.map((r) => {
    const lib = rows.find((l) => l.valueSize === r.valueSize && l.method === r.backend)?.ms;
    const ratio = lib === undefined || r.method === r.backend ? "" : `${(r.ms / lib).toFixed(2)}x`;
    const bytes = (n: number) => r.bytesRead < 0 ? "" : fmtBytes(n);
    const perEntry = bytes(Math.round(r.bytesPerEntry));
    return [fmtBytes(r.valueSize), r.method, fmtMs(r.ms), ratio, bytes(r.bytesRead), perEntry];
  });
  const title = `Listing ${first.entries} entries (one process, median of ${first.reps})`;
  return `${section(title, LIST, body)}\nBytes read: the worker's \`rchar\` from ` +
    "`/proc/self/io` during the listing (file backend only).\n";
}

/** One table for bench/micro.ts: medians and the within-trial ratio of each measure. */
export function microTables(results: Results): string {
  const rows = results.micro?.rows ?? [];
  if (rows.length === 0) return "";
  const body = rows.map((r) => {
    const value = (v: number) =>
      r.unit === "ops/s" || v >= 100 ? fmtRate(v) : v.toFixed(v >= 10 ? 1 : 2);
    const values = Object.entries(r.values).filter(([k]) => !k.startsWith("ratio"));
    const { median, min, max, of } = r.ratio;
    const medians = values.map(([k, v]) => `${k}: ${value(v)}`).join("; ");
    const range = `${min.toFixed(2)}–${max.toFixed(2)}`;
    return [`${r.backend} ${r.section}`, medians, r.unit, `${median.toFixed(2)}x`, range, of];
  });
  const title =
    "Single-process measurements (bench/micro.ts, medians; ratios taken within each trial)";
  return section(title, MICRO, body);
}

/** The peers tables (ops/s per size and process count) and the lost-update table. */
export function peersTables(results: Results): string {
  const { rows = [], lost = [] } = results.peers ?? {};
  if (rows.length === 0) return "";
  const out: string[] = [];
  const systems = [...new Set(rows.map((r) => r.system))];
  for (const n of new Set(rows.map((r) => r.n))) {
    for (const processes of [1, 4]) {
      const at = rows.filter((r) => r.n === n && r.processes === processes);
      if (at.length === 0) continue;
      const body = systems.map((system) => {
        const cells = PEER_OPS.map((op) => at.find((x) => x.system === system && x.op === op));
        const failed = (r: PeerRow) => r.failed > 0 ? ` (${r.failed} failed)` : "";
        const text = cells.map((r) => r === undefined ? "" : fmtRate(r.opsPerSec) + failed(r));
        const kept = cells[3]?.kept;
        return [system, ...text, kept === undefined ? "" : `${kept} of ${n}`];
      });
      const about = `${processes} process${processes > 1 ? "es" : ""}`;
      const title = `Peers: ${n} keys of 1 KiB, ${about} (ops/s, median of ${at[0]?.trials ?? 1})`;
      out.push(section(title, PEERS, body));
    }
  }
  const first = lost[0];
  if (first !== undefined) {
    const counts = (l: typeof first) => [l.increments, l.final, l.lost, l.retries].map(String);
    const body = lost.map((l) => [l.system, ...counts(l)]);
    const each = first.increments / first.processes;
    const title =
      `Lost updates: ${first.processes} processes x ${each} read-modify-write increments of one key`;
    out.push(section(title, LOST, body));
  }
  return out.join("\n");
}

/** The targets as a Markdown table. */
export function targetsTable(targets: readonly TargetRow[]): string {
  const judged = (met: boolean) => met ? "met" : "**MISSED**";
  const result = ({ met, measured }: TargetRow) =>
    met !== null ? judged(met) : measured === "not measured" ? measured : "reported";
  return table("target|measured|result", targets.map((t) => [t.goal, t.measured, result(t)]));
}

/** How many invariant checks ran, and any that broke. */
export function invariantsText({ invariants: { checks, violations } }: Results): string {
  if (violations.length === 0) return `All ${checks} invariant checks held (${HELD}).`;
  const list = violations.map((v) => `- ${v}`).join("\n");
  return `**${violations.length} of ${checks} invariant checks BROKE:**\n\n${list}`;
}

/** The console's section of BENCH.md, from bench/console.json ("" when it has not run). */
export function consoleSection(): string {
  let r: ConsoleResults;
  try {
    r = JSON.parse(
      Deno.readTextFileSync(new URL("console.json", import.meta.url)),
    ) as ConsoleResults;
  } catch {
    return "";
  }
  const rows = r.rows.map((x) => [
    x.page,
    fmtMs(x.p50),
    fmtMs(x.p95),
    x.p95 < 100 ? "met" : "**MISSED**",
    `${x.floor}: ${fmtMs(x.floorP50)}`,
  ]);
  const cold = Object.entries(r.cold).map(([k, v]) => `${k} ${fmtMs(v)} ms`).join(", ");
  return `### Operator console (bench/console.ts, \`deno task bench:console\`, ${r.startedAt})\n\n` +
    `A file store of ${r.entries.toLocaleString("en-US")} memories with ${r.versions} versions ` +
    `each, served by \`agentmem serve\` in its own process; ${r.trials} requests per page, timed ` +
    `from the request to the last byte. Target: under 100 ms (judged on p95).\n\n` +
    table("page|p50 ms:|p95 ms:|under 100 ms|floor (this process), p50 ms", rows) +
    `\n\nOnce per start (${cold}): the audit and the index of every version, which later visits ` +
    `only bring up to date.\n${(r.notes ?? []).map((n) => `\n- ${n}`).join("")}\n`;
}

/** BENCH.md for `results`, with `summary` (Markdown) under "Summary" if given. */
export function renderBenchMd(results: Results, overview?: string): string {
  const { machine: m, notes, summary } = results;
  const c = results.config;
  const nats = m.natsServer === "not used"
    ? "no suite ran on NATS"
    : c.servers === "private nats-server"
    ? "a private server on loopback, file storage"
    : "external servers";
  const fields: Record<string, unknown> = {
    ...c,
    ...m,
    nats,
    loadAverage: m.loadAverage.join(", "),
    command: results.command,
    startedAt: results.startedAt,
    seconds: Math.round(results.durationMs / 1000),
    targets: targetsTable(summary.targets),
    operations: operationsTables(results).trim(),
    listing: listTable(results).trim(),
    micro: microTables(results).trim(),
    peers: peersTables(results).trim(),
    console: consoleSection().trim(),
    review: reviewSection().trim(),
    invariants: invariantsText(results),
    listEntries: summary.list[0]?.entries ?? c.listEntries,
    notes: notes.length > 0 ? `## Notes\n\n${notes.map((n) => `- ${n}`).join("\n")}` : "",
    overview: overview ? `## Summary\n\n${overview.trim()}` : "",
  };
  const template = Deno.readTextFileSync(new URL("template.md", import.meta.url));
  return template.replace(/\{\{(\w+)\}\}/g, (_, name: string) => String(fields[name]));
}

/**
 * Writes BENCH.md from `results`, with bench/summary.md as its summary (the analysis is
 * docs/performance.md).
 */
export async function writeBenchMd(results: Results): Promise<void> {
  const overview = await Deno.readTextFile(new URL("summary.md", import.meta.url)).catch(() => "");
  await Deno.writeTextFile(new URL("BENCH.md", ROOT), renderBenchMd(results, overview));
  const args = ["fmt", "--quiet", "BENCH.md", "bench/results.json"];
  const fmt = { args, cwd: ROOT, stdout: "null", stderr: "piped" } as const;
  const out = await new Deno.Command(Deno.execPath(), fmt).output();
  if (out.success) return;
  console.error(`deno fmt of the generated files failed:\n${new TextDecoder().decode(out.stderr)}`);
}

if (import.meta.main) {
  const path = Deno.args[0] ?? SAVED;
  const saved = JSON.parse(await Deno.readTextFile(path)) as Results;
  if (saved.schema !== 1) throw new Error(`${path} is not a benchmark results file (schema 1)`);
  const same = (await Deno.realPath(path)) === (await Deno.realPath(SAVED).catch(() => ""));
  if (!same) await Deno.copyFile(path, SAVED);
  // The summary is recomputed from the raw records, so a newer report shows its new columns.
  await writeBenchMd({ ...saved, summary: summarize(saved.runs, saved.lists, saved.micro) });
  console.error("Wrote BENCH.md");
}
