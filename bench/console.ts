// `deno task bench:console`: the operator console on a full file store (1,024 memories of 64
// versions each), served by `agentmem serve` in its own process: the memories page, a timeline and
// the audit log's first page, each next to the library call that answers the same question (its
// floor, in this process). Writes bench/console.json and re-renders BENCH.md from it and the saved
// bench/results.json.

import { auditLog, history, MAX_ENTRIES, openFileStore, Scope } from "../mod.ts";
import { ROOT_CONFIG, spawnDeno } from "../tests/harness.ts";
import { progress } from "./_format.ts";
import type { ConsoleResults } from "./summarize.ts";
import { median, percentile } from "./_stats.ts";

const VERSIONS = 64;
const TRIALS = Number(Deno.args[0] ?? 30);
const OUT = new URL("console.json", import.meta.url);

async function timed(fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < TRIALS; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out.sort((a, b) => a - b);
}

async function run(): Promise<ConsoleResults> {
  const dir = await Deno.makeTempDir({ prefix: "agentmem-bench-console-" });
  try {
    progress(`console: writing ${MAX_ENTRIES} memories x ${VERSIONS} versions`);
    const store = await openFileStore({ dir, durable: false });
    const keys = Array.from(
      { length: MAX_ENTRIES },
      (_, i) => `mem.k${String(i).padStart(4, "0")}`,
    );
    for (let v = 0; v < VERSIONS; v++) {
      const scope = new Scope({ run: `run-${v}`, actor: "agent:bench", tainted: v % 9 === 4 });
      const body = `version ${v}\n${"a line of a memory's body\n".repeat(20)}`;
      await Promise.all(
        keys.map((k) => store.update(k, `Memory ${k}, version ${v}`, body, { scope })),
      );
    }
    progress("console: starting agentmem serve");
    await using child = spawnDeno(new URL("../cli.ts", import.meta.url), ["serve", "--dir", dir], {
      config: ROOT_CONFIG,
      rawLines: true,
      timeLimitMs: 600_000,
    });
    const line = String((await child.waitFor("raw")).line);
    const url = new URL(/http:\/\/\S+/.exec(line)![0]);
    const cookie = `agentmem_console_${url.port}=${url.searchParams.get("token")}`;
    const get = async (path: string) => {
      const r = await fetch(new URL(path, url.origin), { headers: { cookie } });
      if (r.status !== 200) throw new Error(`GET ${path}: ${r.status}`);
      await r.text();
    };
    const once = async (path: string) => {
      const t = performance.now();
      await get(path);
      return performance.now() - t;
    };
    // Asked for at once: each waits for what the console reads as it starts (the audit, then
    // the index of every version).
    const cold = { "first memories page, waiting for the audit": await once("/memories") };
    const log = await once("/log");
    Object.assign(cold, { "first audit log page, waiting for the index": log });
    let n = 0;
    const key = () => keys[(n++ * 389) % keys.length]!;
    progress(`console: ${TRIALS} trials of each page and floor`);
    const pages = [
      ["memories page", () => get("/memories"), "store.list()", () => store.list()],
      ["timeline page", () => get(`/memory/${key()}`), "history(key)", () => history(store, key())],
      [
        "audit log, first page",
        () => get("/log"),
        "auditLog(limit 50)",
        () => auditLog(store, { limit: 50 }),
      ],
    ] as const;
    const rows = [];
    for (const [page, fn, floor, floorFn] of pages) {
      const times = await timed(fn);
      const floors = await timed(floorFn);
      rows.push({
        page,
        p50: median(times),
        p95: percentile(times, 95),
        floor,
        floorP50: median(floors),
      });
    }
    child.kill("SIGTERM");
    await child.finished();
    return {
      startedAt: new Date().toISOString(),
      entries: keys.length,
      versions: VERSIONS,
      trials: TRIALS,
      cold,
      rows,
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const results = await run();
  await Deno.writeTextFile(OUT, JSON.stringify(results, null, 2) + "\n");
  const report = await import("./report.ts");
  const saved = JSON.parse(await Deno.readTextFile(new URL("results.json", import.meta.url)));
  const { summarize } = await import("./summarize.ts");
  await report.writeBenchMd({ ...saved, summary: summarize(saved.runs, saved.lists, saved.micro) });
  console.log(report.consoleSection());
}
