// Checks a kept nemesis history again, offline: `deno run --allow-read
// tests/nemesis/check_history.ts <dir> [--timeout MS] [--margin MS]`, for a run kept with --keep.

import { check, historyLine, passed, summaryLine } from "./checker.ts";
import { readHistory } from "./history.ts";

if (import.meta.main) {
  const dir = Deno.args[0];
  if (dir === undefined) {
    console.error("usage: check_history.ts <dir> [--timeout MS] [--margin MS]");
    Deno.exit(2);
  }
  const num = (name: string, fallback: number) => {
    const i = Deno.args.indexOf(`--${name}`);
    return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
  };
  const paths: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (e.name.endsWith(".jsonl")) paths.push(`${dir}/${e.name}`);
  }
  const v = check(await readHistory(paths), {
    deadlineMs: num("timeout", 2_000),
    marginMs: num("margin", 2_000),
  });
  console.log(
    `nemesis: failed reads ${v.failedReads}, typed refusals ${v.refused}, stale reads ${v.staleReads}, resurrected ${v.resurrected}, phantom ${v.phantom}, untyped ${v.untyped}, slowest call ${v.slowestMs} ms`,
  );
  for (const e of v.examples) console.log(`nemesis:   ${e}`);
  if (v.versionedKeys > 0) console.log(historyLine(v));
  console.log(summaryLine(v));
  Deno.exit(passed(v) ? 0 : 1);
}
