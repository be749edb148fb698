// BENCH.md from a run's results, and `deno task bench:report [results.json]`, which re-renders it
// from a saved file. The page is bench/template.md with its `{{name}}` fields filled, and
// bench/analysis.md; the generated files go through `deno fmt`, so `deno fmt --check` passes.

import * as report from "./_report.ts";
import type { Results } from "./_results.ts";
import { summarize } from "./_summary.ts";

const ROOT = new URL("../", import.meta.url);
const SAVED = new URL("results.json", import.meta.url).pathname;

/** BENCH.md for `results`, with `analysis` (Markdown) under "Analysis" if given. */
export function renderBenchMd(results: Results, analysis?: string): string {
  const { machine: m, notes, summary } = results;
  const c = results.config;
  const nats = c.servers === "private nats-server"
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
    targets: report.targetsTable(summary.targets),
    operations: report.operationsTables(results).trim(),
    listing: report.listTable(results).trim(),
    micro: report.microTables(results).trim(),
    peers: report.peersTables(results).trim(),
    invariants: report.invariantsText(results),
    listEntries: summary.list[0]?.entries ?? c.listEntries,
    notes: notes.length > 0 ? `## Notes\n\n${notes.map((n) => `- ${n}`).join("\n")}` : "",
    analysis: analysis ? `## Analysis\n\n${analysis.trim()}` : "",
  };
  const template = Deno.readTextFileSync(new URL("template.md", import.meta.url));
  return template.replace(/\{\{(\w+)\}\}/g, (_, name: string) => String(fields[name]));
}

/** Writes BENCH.md from `results`, with bench/analysis.md as its analysis. */
export async function writeBenchMd(results: Results): Promise<void> {
  const analysis = await Deno.readTextFile(new URL("bench/analysis.md", ROOT)).catch(() =>
    undefined
  );
  await Deno.writeTextFile(new URL("BENCH.md", ROOT), renderBenchMd(results, analysis));
  const args = ["fmt", "--quiet", "BENCH.md", "bench/results.json"];
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
  }).output();
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
