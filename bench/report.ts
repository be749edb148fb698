// Re-renders BENCH.md from a saved `--json` results file, without
// re-running the benchmark: `deno task bench:report [results.json]`. The generated files are run
// through `deno fmt`, so they stay clean for `deno fmt --check`.

import { renderBenchMd } from "./_bench_md.ts";
import { type Results, summarize } from "./_results.ts";

const ROOT = new URL("../", import.meta.url);

/** Writes BENCH.md from `results`. */
export async function writeBenchMd(results: Results): Promise<void> {
  let analysis: string | undefined;
  try {
    analysis = await Deno.readTextFile(new URL("bench/analysis.md", ROOT));
  } catch {
    analysis = undefined;
  }
  await Deno.writeTextFile(
    new URL("BENCH.md", ROOT),
    renderBenchMd(results, analysis),
  );
  await formatGenerated();
}

// The generated files are committed, so they must pass `deno fmt --check` as written.
async function formatGenerated(): Promise<void> {
  const files = ["BENCH.md", "bench/results.json"]
    .map((f) => new URL(f, ROOT).pathname)
    .filter((f) => {
      try {
        return Deno.statSync(f).isFile;
      } catch {
        return false;
      }
    });
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--quiet", ...files],
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
  const path = Deno.args[0] ?? new URL("results.json", import.meta.url).pathname;
  const saved = JSON.parse(await Deno.readTextFile(path)) as Results;
  if (saved.schema !== 1) throw new Error(`${path} is not a benchmark results file (schema 1)`);
  // The summary is recomputed from the raw records, so a newer report shows its new columns.
  const more = saved.micro?.targets ?? [];
  const results: Results = { ...saved, summary: summarize(saved.runs, saved.lists, more) };
  const savedTo = new URL("results.json", import.meta.url).pathname;
  if (Deno.args[0] !== undefined && (await Deno.realPath(path)) !== savedTo) {
    await Deno.copyFile(path, savedTo);
  }
  await writeBenchMd(results);
  console.error("Wrote BENCH.md");
}
