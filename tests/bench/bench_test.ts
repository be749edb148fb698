// The benchmark's CI smoke: `--quick` completes, reports every section and target, and every
// invariant holds; a broken invariant makes it fail loudly. Its speed is not checked here.

import assert from "node:assert/strict";
import type { Results } from "../../bench/summarize.ts";
import { needsNats } from "../_lib/nats_server.ts";
import { spawnChild, spawnDeno } from "../_lib/spawn.ts";
import { tempDir } from "../_lib/temp_dir.ts";

const MAIN = new URL("../../bench/main.ts", import.meta.url).pathname;

async function bench(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await spawnDeno(MAIN, args, {
    name: `bench ${args.join(" ")}`,
    env,
    timeLimitMs: 600_000,
  }).finished();
  return { code, stdout, stderr };
}

Deno.test({
  name: "bench --quick completes with every invariant held and every target reported",
  ...needsNats(),
  async fn() {
    await using tmp = await tempDir("agentmem-bench-test-");
    const dir = tmp.path;
    const json = `${dir}/results.json`;
    const run = await bench(["--quick", "--json", json]);
    assert.equal(run.code, 0, `bench --quick failed:\n${run.stderr}\n${run.stdout}`);
    const results = JSON.parse(await Deno.readTextFile(json)) as Results;
    assert.deepEqual(results.invariants.violations, []);
    assert.ok(results.invariants.checks > 50, `only ${results.invariants.checks} checks ran`);

    const targets = new Set(results.summary.main.map((r) => r.target));
    assert.deepEqual([...targets].sort(), ["file", "file-raw", "jetstream", "jetstream-raw"]);
    const ops = new Set(results.summary.main.map((r) => r.op));
    assert.deepEqual([...ops].sort(), ["counter", "create", "delete", "read", "update"]);
    assert.ok(results.summary.list.length === 12, "a listing method is missing");
    // Every target of the issues is there, and measured (met or missed, never "not measured").
    const goals = results.summary.targets.map((t) => t.goal).join("\n");
    for (
      const pattern of [
        /file read time <= 1\.5x file-raw/,
        /jetstream read time <= 1\.15x jetstream-raw/,
        /jetstream create >= 0\.6x jetstream-raw \(disjoint\)/,
        /jetstream delete >= 0\.5x jetstream-raw/,
        /file list <= 2x the raw pass/,
        /file create of an existing key/,
        /jetstream create of an existing key/,
        /file exact capacity/,
        /jetstream exact capacity/,
        /file create, 16 in flight, >= 1\.5x today's library/,
        /file update, 16 in flight, >= 1\.5x today's library/,
      ]
    ) assert.match(goals, pattern);
    for (const t of results.summary.targets) assert.notEqual(t.measured, "not measured", t.goal);

    // The peers table covers every system at 1 and 4 processes, and the lost-update table
    // shows what it exists to show: plain read-then-write loses increments, checked ones do not.
    const peers = results.peers!;
    const systems = new Set(peers.rows.map((r) => r.system));
    for (
      const s of [
        "agentmem file",
        "agentmem jetstream",
        "Deno KV",
        "SQLite",
        "Anthropic filesystem tool",
        "MCP memory (JSONL)",
      ]
    ) {
      assert.ok(systems.has(s as never), `peers table lacks ${s}`);
      for (const processes of [1, 4]) {
        const ops = peers.rows.filter((r) => r.system === s && r.processes === processes);
        assert.deepEqual(ops.map((r) => r.op).sort(), [
          "create",
          "delete",
          "list",
          "read",
          "update",
        ]);
      }
    }
    const lost = new Map(peers.lost.map((l) => [l.system, l.lost]));
    assert.equal(lost.get("agentmem jetstream"), 0);
    assert.equal(lost.get("SQLite"), 0);
    assert.equal(lost.get("Deno KV"), 0);
    assert.equal(lost.get("agentmem file, readBeforeUpdate"), 0);

    assert.match(run.stdout, /### Targets/);
    assert.match(run.stdout, /### Peers: /);
    assert.match(run.stdout, /### Lost updates: /);
  },
});

Deno.test("bench fails loudly when an invariant breaks", async () => {
  const run = await bench(
    [
      "--quick",
      "--backend=file",
      "--keyspace=contended",
      "--mix=create",
      "--suites=main",
    ],
    { AGENTMEM_BENCH_FAULT: "create-always-wins" },
  );
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /INVARIANT.*BROKEN/);
  assert.match(run.stderr, /more than one create winner/);
});

Deno.test("bench refuses a bad flag with the usage text", async () => {
  const run = await bench(["--keyspace=sideways"]);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /Invalid --keyspace "sideways"/);
  assert.match(run.stderr, /Usage: deno task bench/);
});

Deno.test("the benchmark's peers are dev-only: importing the library pulls none of them", async () => {
  const out = await spawnChild(Deno.execPath(), [
    "info",
    "--json",
    new URL("../../mod.ts", import.meta.url).pathname,
  ]).finished();
  assert.ok(out.success, out.stderr);
  // `modules` is the graph mod.ts reaches (npm packages appear as `npm:/name@version`);
  // `npmPackages` would list every package the lockfile knows, reached or not.
  const graph = JSON.parse(out.stdout) as {
    modules: { specifier: string }[];
  };
  const pulled = graph.modules.map((m) => m.specifier);
  assert.ok(pulled.some((s) => s.endsWith("/mod.ts")), "the graph does not hold mod.ts");
  const peers =
    /\/bench\/|@anthropic-ai\/sdk|node:sqlite|server-memory|unstorage|write-file-atomic/;
  assert.deepEqual(pulled.filter((s) => peers.test(s)), []);
});
