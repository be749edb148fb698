// BENCH.md, rendered from a run's results (the `--json` document), so rerunning the benchmark
// rewrites it in one command. The page's prose is bench/template.md, whose `{{name}}` fields are
// filled here; hand-written analysis lives in bench/analysis.md and is included.

import { table } from "./_format.ts";
import {
  invariantsText,
  listTable,
  microTables,
  operationsTables,
  peersTables,
  targetsTable,
} from "./_report.ts";
import type { Results } from "./_results.ts";

const TEMPLATE = new URL("./template.md", import.meta.url);

/**
 * Renders BENCH.md.
 *
 * @param results The run's results.
 * @param analysis Hand-written Markdown to include under "Analysis", if any.
 */
export function renderBenchMd(results: Results, analysis?: string): string {
  const m = results.machine;
  const c = results.config as Record<string, unknown>;
  const nats = c.servers === "private nats-server"
    ? "a private server on loopback, file storage"
    : "external servers";
  const fields: Record<string, unknown> = {
    command: results.command,
    startedAt: results.startedAt,
    seconds: Math.round(results.durationMs / 1000),
    machine: table("|", [
      ["CPU", `${m.cpu}, ${m.cores} cores`],
      ["OS", m.os],
      ["Deno", `${m.deno} (V8 ${m.v8})`],
      ["nats-server", `${m.natsServer} (${nats})`],
      ["Load average at the end", m.loadAverage.join(", ")],
    ]),
    targets: targetsTable(results.summary.targets),
    operations: operationsTables(results).trim(),
    listing: listTable(results).trim(),
    micro: microTables(results).trim(),
    peers: peersTables(results).trim(),
    invariants: invariantsText(results),
    processes: c.processes,
    mix: c.mix,
    trials: c.trials,
    listEntries: results.summary.list[0]?.entries ?? c.listEntries,
    notes: results.notes.length > 0
      ? `## Notes\n\n${results.notes.map((n) => `- ${n}`).join("\n")}`
      : "",
    analysis: analysis ? `## Analysis\n\n${analysis.trim()}` : "",
  };
  return Deno.readTextFileSync(TEMPLATE).replace(
    /\{\{(\w+)\}\}/g,
    (_, name: string) => String(fields[name]),
  );
}
