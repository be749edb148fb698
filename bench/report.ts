// Re-renders BENCH.md from a saved `--json` results file, without re-running the benchmark:
// `deno task bench:report [results.json]`. The generated files are run through `deno fmt`, so
// they stay clean for `deno fmt --check`.

import { renderBenchMd } from "./_bench_md.ts";
import type { Results } from "./_results.ts";
import { summarize } from "./_summary.ts";

const ROOT = new URL("../", import.meta.url);
const SAVED = new URL("results.json", import.meta.url).pathname;

/** Writes BENCH.md from `results`, with bench/analysis.md as its analysis. */
export async function writeBenchMd(results: Results): Promise<void> {
  const analysis = await Deno.readTextFile(new URL("bench/analysis.md", ROOT)).catch(() =>
    undefined
  );
  await Deno.writeTextFile(new URL("BENCH.md", ROOT), renderBenchMd(results, analysis));
  // The generated files are committed, so they must pass `deno fmt --check` as written.
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--quiet", "BENCH.md", "bench/results.json"],
    cwd: ROOT.pathname,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    console.error(
      `deno fmt of the generated files failed:\n${new TextDecoder().decode(out.stderr)}`,
    );
  }
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
