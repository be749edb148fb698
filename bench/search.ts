// memory_search on a full file store: 1,024 memories of 4 KiB of word-like text, searched through
// the tool as a model calls it (list, read every body, rank, frame a page). Against a floor
// measured in the same run: every entry file read with readFileSync and scanned with indexOf for
// the query's first word, which is the least a search of current text can cost. Target: a search
// in under 50 ms.
//
// `deno run --config tests/deno.json -A bench/search.ts [--runs=N]`; prints one JSON object.

import { readdirSync, readFileSync } from "node:fs";
import { memoryTools, openFileStore, runTool } from "../mod.ts";
import { readAllEntries } from "../store/_entries.ts";
import { queryTerms, rank } from "../tools/_search.ts";

const ENTRIES = 1_024;
const BODY_BYTES = 4_096;
const TARGET_MS = 50;
const runs = Number(Deno.args.find((a) => a.startsWith("--runs="))?.slice(7) ?? 30);

// A seeded vocabulary: 2,000 made-up words, used with a Zipf-like skew so some are common.
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(2_026);
const SYLLABLES = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "de", "vu", "sha", "quo"];
const WORDS = Array.from({ length: 2_000 }, () => {
  let w = "";
  for (let n = 2 + Math.floor(random() * 3); n > 0; n--) {
    w += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
  }
  return w;
});
const word = () => WORDS[Math.floor(WORDS.length * random() ** 2.5)]!;

function body(): string {
  let text = "";
  while (text.length < BODY_BYTES - 12) {
    text += word() + (random() < 0.08 ? ".\n" : " ");
  }
  return text.slice(0, BODY_BYTES);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function p95(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.95))]!;
}

const dir = await Deno.makeTempDir({ prefix: "agentmem-bench-search-" });
try {
  const store = await openFileStore({ dir, durable: false });
  for (let i = 0; i < ENTRIES; i++) {
    await store.create(
      `note.${String(i).padStart(4, "0")}`,
      `${word()} ${word()} ${word()}`,
      body(),
    );
  }
  const tools = memoryTools(store, { search: true });
  const queries = {
    common: WORDS[0]!,
    rare: WORDS[1_500]!,
    three: `${WORDS[3]} ${WORDS[40]} ${WORDS[700]}`,
  };
  const rows: Record<string, { median: number; p95: number; floor: number; ratio: number }> = {};
  for (const [name, query] of Object.entries(queries)) {
    const first = query.split(" ")[0]!;
    const tool: number[] = [];
    const floor: number[] = [];
    for (let r = 0; r < runs + 3; r++) {
      // Alternate, so both see the same machine load.
      let t = performance.now();
      const result = await runTool(tools, "memory_search", { query });
      const took = performance.now() - t;
      if (result.isError) throw new Error(result.content);
      t = performance.now();
      let found = 0;
      for (const name of readdirSync(dir)) {
        if (!name.endsWith(".md")) continue;
        if (readFileSync(`${dir}/${name}`, "utf8").toLowerCase().includes(first)) found++;
      }
      const floorTook = performance.now() - t;
      if (found === 0) throw new Error(`no entry holds ${first}`);
      if (r >= 3) {
        tool.push(took);
        floor.push(floorTook);
      }
    }
    rows[name] = {
      median: Number(median(tool).toFixed(2)),
      p95: Number(p95(tool).toFixed(2)),
      floor: Number(median(floor).toFixed(2)),
      ratio: Number((median(tool) / median(floor)).toFixed(2)),
    };
  }
  // Where a search's time goes: reading every entry (one pass through the store), and ranking.
  const reading: number[] = [];
  const ranking: number[] = [];
  for (let r = 0; r < runs; r++) {
    let t = performance.now();
    const docs = await readAllEntries(store);
    reading.push(performance.now() - t);
    t = performance.now();
    rank(docs, queryTerms(queries.three));
    ranking.push(performance.now() - t);
  }
  const phases = {
    readEntries: Number(median(reading).toFixed(2)),
    rank: Number(median(ranking).toFixed(2)),
  };
  const worst = Math.max(...Object.values(rows).map((r) => r.median));
  console.log(JSON.stringify(
    {
      bench: "memory_search, file backend",
      entries: ENTRIES,
      bodyBytes: BODY_BYTES,
      runs,
      unit: "ms per search (median, p95); floor: readFileSync + indexOf of every entry",
      rows,
      phases,
      target: { ms: TARGET_MS, met: worst < TARGET_MS },
    },
    null,
    2,
  ));
} finally {
  await Deno.remove(dir, { recursive: true });
}
