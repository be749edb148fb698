// memory_search on a full file store: 1,024 memories of 4 KiB of word-like text, searched through
// the tool as a model calls it (list, read every body, rank, frame a page). Against a floor
// measured in the same run: every entry file read with readFileSync and scanned with indexOf for
// the query's first word, which is the least a search of current text can cost. Target: a search
// in under 50 ms. Then where a search's time goes: reading every entry, and ranking.
//
// `deno task bench:search [--runs=N]`; prints one JSON object.

import { readdirSync, readFileSync } from "node:fs";
import { memoryTools, openFileStore, runTool } from "../mod.ts";
import { readAllEntries } from "../store/_entries.ts";
import { queryTerms, rank } from "../tools/_search.ts";
import { mulberry32 } from "../tests/_lib/rng.ts";
import { median, percentile, round } from "./_stats.ts";

const [ENTRIES, BODY_BYTES, TARGET_MS] = [1_024, 4_096, 50];
const runs = Number(Deno.args.find((a) => a.startsWith("--runs="))?.slice(7) ?? 30);

// A seeded vocabulary: 2,000 made-up words, used with a Zipf-like skew so some are common.
const random = mulberry32(2_026);
const SYLLABLES = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "de", "vu", "sha", "quo"];
const syllable = () => SYLLABLES[Math.floor(random() * SYLLABLES.length)];
const spelled = () => Array.from({ length: 2 + Math.floor(random() * 3) }, syllable).join("");
const WORDS = Array.from({ length: 2_000 }, spelled);
const word = () => WORDS[Math.floor(WORDS.length * random() ** 2.5)] as string;

function body(): string {
  let text = "";
  while (text.length < BODY_BYTES - 12) text += word() + (random() < 0.08 ? ".\n" : " ");
  return text.slice(0, BODY_BYTES);
}

const dir = await Deno.makeTempDir({ prefix: "agentmem-bench-search-" });
try {
  const store = await openFileStore({ dir, durable: false });
  const key = (i: number) => `note.${String(i).padStart(4, "0")}`;
  for (let i = 0; i < ENTRIES; i++) {
    await store.create(key(i), `${word()} ${word()} ${word()}`, body());
  }
  const tools = memoryTools(store, { search: true });
  const three = `${WORDS[3]} ${WORDS[40]} ${WORDS[700]}`;
  const queries = { common: WORDS[0], rare: WORDS[1_500], three };
  const rows: Record<string, { median: number; p95: number; floor: number; ratio: number }> = {};
  for (const [name, query = ""] of Object.entries(queries)) {
    const first = query.split(" ")[0] as string;
    const [tool, floor]: [number[], number[]] = [[], []];
    for (let r = 0; r < runs + 3; r++) {
      // Alternate, so both see the same machine load; the first three are a warm-up.
      let t = performance.now();
      const result = await runTool(tools, "memory_search", { query });
      const took = performance.now() - t;
      if (result.isError) throw new Error(result.content);
      t = performance.now();
      const names = readdirSync(dir).filter((n) => n.endsWith(".md"));
      const holds = (n: string) =>
        readFileSync(`${dir}/${n}`, "utf8").toLowerCase().includes(first);
      const [found, floorTook] = [names.filter(holds).length, performance.now() - t];
      if (found === 0) throw new Error(`no entry holds ${first}`);
      if (r < 3) continue;
      tool.push(took);
      floor.push(floorTook);
    }
    const [ms, floorMs, p95] = [
      median(tool),
      median(floor),
      percentile(tool.sort((a, b) => a - b), 95),
    ];
    rows[name] = {
      median: round(ms, 2),
      p95: round(p95, 2),
      floor: round(floorMs, 2),
      ratio: round(ms / floorMs, 2),
    };
  }
  const [reading, ranking]: [number[], number[]] = [[], []];
  for (let r = 0; r < runs; r++) {
    let t = performance.now();
    const docs = await readAllEntries(store);
    reading.push(performance.now() - t);
    t = performance.now();
    rank(docs, queryTerms(three));
    ranking.push(performance.now() - t);
  }
  const phases = { readEntries: round(median(reading), 2), rank: round(median(ranking), 2) };
  const worst = Math.max(...Object.values(rows).map((r) => r.median));
  const unit = "ms per search (median, p95); floor: readFileSync + indexOf of every entry";
  const target = { ms: TARGET_MS, met: worst < TARGET_MS };
  const bench = "memory_search, file backend";
  const out = { bench, entries: ENTRIES, bodyBytes: BODY_BYTES, runs, unit, rows, phases, target };
  console.log(JSON.stringify(out, null, 2));
} finally {
  await Deno.remove(dir, { recursive: true });
}
