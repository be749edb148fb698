// Re-renders BENCH.md and the scaling chart from a saved `--json` results file, without
// re-running the benchmark: `deno task bench:report [results.json]`.

import { renderBenchMd } from "./_bench_md.ts";
import type { Results } from "./_results.ts";
import { scalingSvg } from "./_svg.ts";

const ROOT = new URL("../", import.meta.url);

/** Writes BENCH.md (and bench/scaling.svg) from `results`. */
export async function writeBenchMd(results: Results): Promise<void> {
  const svg = scalingSvg(results);
  if (svg !== undefined) await Deno.writeTextFile(new URL("bench/scaling.svg", ROOT), svg);
  let analysis: string | undefined;
  try {
    analysis = await Deno.readTextFile(new URL("bench/analysis.md", ROOT));
  } catch {
    analysis = undefined;
  }
  await Deno.writeTextFile(
    new URL("BENCH.md", ROOT),
    renderBenchMd(results, "bench/scaling.svg", analysis),
  );
}

if (import.meta.main) {
  const path = Deno.args[0] ?? new URL("results.json", import.meta.url).pathname;
  const results = JSON.parse(await Deno.readTextFile(path)) as Results;
  if (results.schema !== 1) throw new Error(`${path} is not a benchmark results file (schema 1)`);
  if (Deno.args[0] !== undefined) {
    await Deno.copyFile(path, new URL("results.json", import.meta.url));
  }
  await writeBenchMd(results);
  console.error("Wrote BENCH.md and bench/scaling.svg");
}
