// The benchmark's CI smoke: `--quick` completes, reports every section and target, and every
// invariant holds; a broken invariant makes it fail loudly. Its speed is not checked here.

import assert from "node:assert/strict";
import type { Results } from "../bench/_results.ts";
import { needsNats } from "./_nats_server.ts";

const MAIN = new URL("../bench/main.ts", import.meta.url).pathname;

async function bench(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, ...args],
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test({
  name: "bench --quick completes with every invariant held and every target reported",
  ...needsNats(),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "agentmem-bench-test-" });
    try {
      const json = `${dir}/results.json`;
      const svg = `${dir}/scaling.svg`;
      const run = await bench(["--quick", "--json", json, "--svg", svg]);
      assert.equal(run.code, 0, `bench --quick failed:\n${run.stderr}\n${run.stdout}`);
      const results = JSON.parse(await Deno.readTextFile(json)) as Results;
      assert.deepEqual(results.invariants.violations, []);
      assert.ok(results.invariants.checks > 50, `only ${results.invariants.checks} checks ran`);

      const targets = new Set(results.summary.main.map((r) => r.target));
      assert.deepEqual(
        [...targets].sort(),
        ["file", "file-raw", "file-wfa", "jetstream", "jetstream-raw"],
      );
      const ops = new Set(results.summary.main.map((r) => r.op));
      assert.deepEqual([...ops].sort(), ["counter", "create", "delete", "read", "update"]);
      assert.ok(results.summary.sweep.length > 0, "no scaling sweep");
      assert.ok(results.summary.list.length === 12, "a listing method is missing");
      // Every target is measured (met or missed, never "not measured").
      assert.equal(results.summary.targets.length, 9);
      for (const t of results.summary.targets) assert.notEqual(t.met, null, t.goal);

      assert.match(run.stdout, /### Targets/);
      assert.match(run.stdout, /### Scaling/);
      assert.match(
        await Deno.readTextFile(svg),
        /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("bench fails loudly when an invariant breaks", async () => {
  const run = await bench(
    [
      "--quick",
      "--backend=file",
      "--keyspace=contended",
      "--mix=create",
      "--sweep=none",
      "--list-entries=0",
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
