// The npm package under Node 22, Node 24 and Bun. Builds the package once (or takes the prebuilt
// one in $AGENTMEM_NPM_DIR) and installs its `npm pack` tarball into an empty project. Checks its
// dependencies, that its code names no Deno global, and that its types check under tsc. Then, as
// real processes of each runtime: the docs' Node and Bun example, the file and jetstream conformance suites
// (each case reported here as a step) and a create race between three processes; and races of a
// Deno, two Node and a Bun process over one directory (create; update with revision checks). A
// missing runtime fails under CI=true and is skipped loudly elsewhere (.ci/run installs them; see
// tests/_lib/runtimes.ts).

import assert from "node:assert/strict";
import { denoGlobalUses } from "../../scripts/build_npm.ts";
import type { Prepared } from "./prepare.ts";
import { denoRacer, race, type Racer } from "./_race.ts";
import { findRuntime, installHint, type Runtime, RUNTIMES } from "../_lib/runtimes.ts";
import { spawnChild } from "../_lib/spawn.ts";
import { TEST_CONFIG } from "../_lib/deno_child.ts";
import type { TestRecord } from "../_lib/test_api.ts";
import { needsNats, startNatsServer } from "../_lib/nats_server.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { bundleRunner, countTogether, denoRunner, type Where } from "../_lib/lock_fleet.ts";
import { missingTools } from "../_lib/needs.ts";
import { DAY, poisonedDay, serve } from "../_lib/console.ts";
import { FLIP_TARGETS, flipRun } from "../_lib/flip.ts";

const CI = Deno.env.get("CI") === "true";
const PREPARE = new URL("./prepare.ts", import.meta.url).pathname;
const CONFIG = TEST_CONFIG;
const RACE_KEYS = Array.from({ length: 60 }, (_, i) => `race.k${i}`);
const found = new Map(RUNTIMES.map((spec) => [spec.name, findRuntime(spec)]));
const missing = RUNTIMES.filter((spec) => found.get(spec.name) === undefined);
if (missing.length > 0 && !CI) {
  console.error(
    `\n%c!!! SKIPPING the npm package tests on ${missing.map((s) => s.name).join(", ")}: ` +
      `not installed. ${missing.map(installHint).join("; ")} !!!\n`,
    "color: red; font-weight: bold",
  );
}

let prepared: Promise<Prepared> | undefined;
let work: string | undefined;
globalThis.addEventListener("unload", () => {
  if (work !== undefined) Deno.removeSync(work, { recursive: true });
});

/** The built package installed in an empty project with the bundled entries, made once. */
function project(): Promise<Prepared> {
  return prepared ??= (async () => {
    work = await Deno.makeTempDir({ prefix: "agentmem-runtimes-" });
    const prebuilt = Deno.env.get("AGENTMEM_NPM_DIR");
    const p = spawnChild(Deno.execPath(), [
      "run",
      "--allow-all",
      "--config",
      CONFIG,
      PREPARE,
      work,
      ...(prebuilt ? [prebuilt] : []),
    ], { name: "prepare.ts", env: { NO_COLOR: "1" }, timeLimitMs: 600_000 });
    const { code, stderr } = await p.finished();
    const out = p.records.at(-1) as Prepared | undefined;
    if (code !== 0 || out?.app === undefined) {
      throw new Error(`preparing the npm package failed (${code}):\n${stderr.slice(-3000)}`);
    }
    return out;
  })();
}

/** The runtime, or a failure naming how to install it (under CI, where it may not be skipped). */
function runtime(name: string): Runtime {
  const rt = found.get(name);
  if (rt === undefined) {
    const spec = RUNTIMES.find((s) => s.name === name)!;
    throw new Error(`${name} is not installed: ${installHint(spec)}`);
  }
  return rt;
}

/** Runs a bundled entry under `rt` and reports each of its tests as a step. */
async function runEntry(
  t: Deno.TestContext,
  rt: Runtime,
  entry: string,
  env: Record<string, string> = {},
): Promise<void> {
  const { app } = await project();
  const p = spawnChild(rt.bin, [`${app}/${entry}.mjs`], {
    name: `${rt.name} ${entry}`,
    cwd: app,
    env: { NO_COLOR: "1", ...env },
    timeLimitMs: 300_000,
  });
  const { code, stderr } = await p.finished();
  const records = p.records.filter((l): l is TestRecord & typeof l => l.t === "test");
  assert.ok(records.length > 0, `${entry} ran no test under ${rt.printed} (${code}):\n${stderr}`);
  for (const r of records) {
    await t.step({
      name: r.name,
      ignore: r.status === "skipped",
      fn: () => {
        if (r.status === "failed") throw new Error(`under ${rt.name} ${rt.printed}:\n${r.error}`);
      },
    });
  }
  const failed = records.filter((r) => r.status === "failed").length;
  assert.equal(code === 0, failed === 0, `exit code ${code} with ${failed} failed:\n${stderr}`);
}

function test(
  name: string,
  runtimes: readonly string[],
  fn: (t: Deno.TestContext) => Promise<void>,
) {
  Deno.test({
    name,
    ignore: !CI && runtimes.some((n) => found.get(n) === undefined),
    sanitizeOps: false,
    sanitizeResources: false,
    fn,
  });
}

test(
  "[npm] the package declares exactly the runtime dependencies, at deno.json's pins",
  [],
  async () => {
    const { app, packageJson } = await project();
    const imports = JSON.parse(await Deno.readTextFile(CONFIG)).imports as Record<string, string>;
    const expected = [
      "@hono/node-server",
      "@nats-io/jetstream",
      "@nats-io/kv",
      "@nats-io/nats-core",
      "@nats-io/transport-node",
      "@opentelemetry/api",
      "diff",
      "hono",
      "yaml",
    ];
    assert.deepEqual(
      Object.fromEntries(Object.entries(packageJson.dependencies as object).sort()),
      Object.fromEntries(expected.map((n) => [n, imports[n]!.slice(`npm:${n}@`.length)])),
    );
    assert.equal(packageJson.name, "@agentmem/memory");
    const installed = `${app}/node_modules/@agentmem/memory`;
    for (const file of ["package.json", "index.mjs", "index.d.mts", "README.md", "LICENSE"]) {
      assert.ok((await Deno.stat(`${installed}/${file}`)).isFile, `the tarball lacks ${file}`);
    }
    // Every module the bundles import from their own folder is in the tarball.
    for (const file of ["index.mjs", "cli.mjs", "bin.mjs"]) {
      const js = await Deno.readTextFile(`${installed}/${file}`);
      for (const [, chunk] of js.matchAll(/from "\.\/([^"]+)"/g)) {
        assert.ok((await Deno.stat(`${installed}/${chunk}`)).isFile, `the tarball lacks ${chunk}`);
      }
    }
  },
);

test("[npm] the package's code never names the Deno global", [], async () => {
  const { app } = await project();
  const installed = `${app}/node_modules/@agentmem/memory`;
  const { files } = JSON.parse(await Deno.readTextFile(`${installed}/package.json`)) as {
    files: string[];
  };
  for (const file of files.filter((f) => f.endsWith(".mjs"))) {
    assert.deepEqual(denoGlobalUses(await Deno.readTextFile(`${installed}/${file}`)), [], file);
  }
});

test(
  "[npm] the package's types check under tsc --strict with Node's module resolution",
  [],
  async () => {
    const { app } = await project();
    // The expected error proves the types are real: were anything `any`, tsc would report an
    // unused @ts-expect-error instead.
    await Deno.writeTextFile(
      `${app}/consumer.ts`,
      [
        'import { type Entry, ExistsError, openFileStore, Scope, type Store } from "@agentmem/memory";',
        'const store: Store = await openFileStore({ dir: ".agentmem" });',
        'const entry: Entry = await store.read("k", { scope: new Scope() });',
        "// @ts-expect-error content is a string",
        "const n: number = entry.content;",
        "console.log(n, ExistsError);",
      ].join("\n") + "\n",
    );
    const imports = JSON.parse(await Deno.readTextFile(CONFIG)).imports as Record<string, string>;
    const tsc = spawnChild(Deno.execPath(), [
      "run",
      "--allow-all",
      "--config",
      CONFIG,
      `${imports.typescript}/tsc`,
      "--noEmit",
      "--strict",
      "--module",
      "nodenext",
      "--moduleResolution",
      "nodenext",
      "--target",
      "esnext",
      "--lib",
      "esnext,dom",
      `${app}/consumer.ts`,
    ], { name: "tsc", cwd: app, env: { NO_COLOR: "1" } });
    const { code, stdout, stderr } = await tsc.finished();
    assert.equal(code, 0, `tsc failed:\n${stdout}${stderr}`);
  },
);

for (const spec of RUNTIMES) {
  const name = spec.name;
  test(`[${name}] the docs' Node and Bun example runs, twice`, [name], async () => {
    const rt = runtime(name);
    const { app } = await project();
    const page = await Deno.readTextFile(new URL("../../docs/backends.md", import.meta.url));
    const example = /```ts\n(\/\/ app\.mjs[^\n]*\n[\s\S]*?)```/.exec(page)?.[1];
    assert.ok(example, "docs/backends.md has no block starting with // app.mjs");
    await Deno.writeTextFile(`${app}/readme_example.mjs`, example);
    await using tmp = await tempDir("agentmem-readme-");
    const cwd = tmp.path;
    // The first run creates the memory; the second meets ExistsError and reads it back.
    for (const run of [1, 2]) {
      const p = spawnChild(rt.bin, [`${app}/readme_example.mjs`], {
        name: `${rt.name} readme_example.mjs`,
        cwd,
        env: { NO_COLOR: "1" },
      });
      const { code, stdout, stderr } = await p.finished();
      assert.equal(code, 0, `run ${run} failed:\n${stderr}`);
      assert.match(stdout, /content: ['"]Sam['"]/, `run ${run} printed:\n${stdout}`);
    }
  });

  test(
    `[${name}] file conformance suite against the installed npm package`,
    [name],
    (t) => runEntry(t, runtime(name), "file_conformance"),
  );

  Deno.test({
    name: `[${name}] jetstream conformance suite against a private nats-server`,
    ignore: (!CI && found.get(name) === undefined) || needsNats().ignore,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async (t) => {
      const rt = runtime(name);
      await project();
      await using server = await startNatsServer();
      await runEntry(t, rt, "jetstream_conformance", { NATS_URL: server.url });
    },
  });

  test(
    `[${name}] three ${name} processes race create() of the same keys: one winner each`,
    [name],
    async () => {
      const rt = runtime(name);
      const { app } = await project();
      await using tmp = await tempDir("agentmem-race-");
      const dir = tmp.path;
      const racers: Racer[] = [1, 2, 3].map((i) => ({
        id: `${name}-${i}`,
        cmd: rt.bin,
        args: [`${app}/race_worker.mjs`],
        cwd: app,
      }));
      const wins = await race(dir, RACE_KEYS, racers);
      console.log(`wins: ${JSON.stringify(wins)}`);
    },
  );
}

for (const spec of RUNTIMES.filter((s) => s.exe === "node")) {
  for (const target of FLIP_TARGETS) {
    test(
      `[${spec.name}] writes, history and check never touch a directory outside through a swapped ${target}`,
      [spec.name],
      async () => {
        const rt = runtime(spec.name);
        const { app } = await project();
        await using tmp = await tempDir("agentmem-flip-");
        const { counts } = await flipRun({
          root: tmp.path,
          target,
          rounds: 30,
          writers: 2,
          start: (job) =>
            spawnChild(rt.bin, [`${app}/flip_worker.mjs`, JSON.stringify(job)], {
              name: `${rt.name} flip_worker.mjs`,
              cwd: app,
            }),
        });
        console.log(`[${spec.name} flipper ${target}] ${JSON.stringify(counts)}`);
      },
    );
  }
}

const MIXED_RACES = {
  create: "race create() of the same keys in one directory",
  update: "race update() of the same keys, each from its own read, with revision checks on",
} as const;

for (const [mode, what] of Object.entries(MIXED_RACES) as [keyof typeof MIXED_RACES, string][]) {
  test(
    `[deno+node+bun] a Deno, a Node 22, a Node 24 and a Bun process ${what}: one winner each`,
    RUNTIMES.map((s) => s.name),
    async () => {
      const { app } = await project();
      await using tmp = await tempDir("agentmem-race-");
      const dir = tmp.path;
      const racers: Racer[] = [
        denoRacer("deno", dir),
        ...RUNTIMES.map((spec) => ({
          id: spec.name,
          cmd: runtime(spec.name).bin,
          args: [`${app}/race_worker.mjs`],
          cwd: app,
        })),
      ];
      const wins = await race(dir, RACE_KEYS, racers, mode);
      console.log(`wins: ${JSON.stringify(wins)}`);
    },
  );
}

test(
  "[node22] the package's agentmem bin runs the operator CLI on Node, and its ./cli exports the CLI's main",
  ["node22"],
  async () => {
    const node = runtime("node22");
    const { app } = await project();
    const bin = `${app}/node_modules/.bin/agentmem`;
    await using tmp = await tempDir("agentmem-bin-");
    const dir = tmp.path;
    const run = async (args: string[], input = "") => {
      await using child = spawnChild(node.bin, [bin, ...args, "--dir", dir], {
        cwd: app,
        input,
        timeLimitMs: 30_000,
      });
      return await child.finished();
    };
    const written = await run(["write", "user.units", "--description", "Units"], "metric\n");
    assert.equal(written.code, 0, written.stderr);
    assert.equal(written.stdout, "created user.units\n");
    const listed = await run(["list"]);
    assert.equal(listed.stdout, "user.units\tUnits\n");
    assert.equal((await run(["read", "user.units", "--raw"])).stdout, "metric\n");
    const info = await run(["info", "--json"]);
    assert.equal(JSON.parse(info.stdout).entries, 1);
    const typo = await run(["lsit"]);
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /did you mean "list"/);
    // The package's `./cli` is the CLI's entry function, as JSR's is.
    await Deno.writeTextFile(
      `${app}/cli_entry.mjs`,
      'import { main } from "@agentmem/memory/cli";\nprocess.exitCode = await main(["--version"]);\n',
    );
    await using entry = spawnChild(node.bin, [`${app}/cli_entry.mjs`], { cwd: app });
    const version = await entry.finished();
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, /^agentmem \d+\.\d+\.\d+\n$/);
  },
);

test("[node22] the package's agentmem bin serves the console on Node", ["node22"], async () => {
  const node = runtime("node22");
  const { app } = await project();
  await using tmp = await tempDir("agentmem-bin-serve-");
  await poisonedDay(tmp.path);
  await using s = await serve(["--dir", tmp.path, "--write"], {
    command: [node.bin, `${app}/node_modules/.bin/agentmem`],
  });
  const memories = await s.page("/memories");
  assert.match(memories, /user\.prefs/);
  assert.match(memories, /&lt;script&gt;alert\(&#39;d&#39;\)/);
  const r = await s.submit(`/run/${DAY.poison}/revert`, `/run/${DAY.poison}/revert`);
  assert.equal(r.status, 200, await r.text());
  const stopped = await s.stop("SIGINT");
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.match(stopped.stderr, /reverted run run-poison-7: 3 keys/);
});

// Writers of every runtime counting on one key under revision checks: Deno holders also hold
// kernel locks, Node and Bun ones are judged by /proc; inside pid namespaces, each judges only
// whom it can see. Not one increment may be lost, no write may fail.
const FLEETS: ReadonlyArray<readonly [string, ReadonlyArray<Where>]> = [
  ["on the host", ["host"]],
  ["in one pid namespace on the host's /proc", ["ns"]],
  ["in two containers with their own /proc", ["container", "container"]],
];
for (const [where, groups] of FLEETS) {
  const needsRoot = groups.some((g) => g !== "host");
  Deno.test({
    name:
      `[deno+node+bun] Deno (with and without /proc), Node 22, Node 24 and Bun writers ${where} count on one key without losing an increment`,
    ignore: !CI &&
      (RUNTIMES.some((s) => found.get(s.name) === undefined) ||
        (needsRoot && missingTools("root", "unshare") !== undefined)),
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      const why = needsRoot ? missingTools("root", "unshare") : undefined;
      if (why !== undefined) throw new Error(why);
      const { app } = await project();
      await using tmp = await tempDir("agentmem-fleet-");
      const all = [
        denoRunner(),
        denoRunner(tmp.path),
        ...RUNTIMES.map((s) => bundleRunner(runtime(s.name).bin, app)),
      ];
      // Spread over the groups: each gets a Deno writer and some of the others.
      const spread = groups.map((g, i) =>
        [g, all.filter((_, j) => j % groups.length === i)] as const
      );
      await countTogether(tmp.path, spread, 80);
    },
  });
}
