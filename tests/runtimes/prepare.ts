// Prepares what tests/runtimes/runtimes_test.ts runs under Node and Bun, in a work directory:
//   <work>/package  the npm package, built by scripts/build_npm.ts (unless a prebuilt one is given)
//   <work>/app      an empty project that installed the package's `npm pack` tarball from disk, as
//                   it would from a registry, plus the NATS client modules the tests connect with,
//                   and the test entries (this folder) bundled so that their imports of mod.ts load
//                   "@agentmem/memory" from node_modules.
// Usage: deno run -A tests/runtimes/prepare.ts <work> [<prebuilt package dir>]
// Prints one JSON line: { app, packageDir, packageJson }.

import { build } from "tsdown";
import { buildNpm } from "../../scripts/build_npm.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const MOD = `${ROOT}mod.ts`;
const HERE = new URL("./", import.meta.url).pathname;
/** The entries bundled for Node and Bun, by output name. */
export const ENTRIES = [
  "file_conformance",
  "jetstream_conformance",
  "race_worker",
  "lock_worker",
  "flip_worker",
] as const;
/** What the test entries import besides the package, each at deno.json's pin. */
const TEST_MODULES = ["@nats-io/transport-node", "@nats-io/kv", "@nats-io/nats-core"];

/** What prepare.ts prints. */
export interface Prepared {
  /** The project directory; each entry is `<app>/<entry>.mjs`. */
  readonly app: string;
  readonly packageDir: string;
  readonly packageJson: Record<string, unknown>;
}

async function run(cmd: string, args: string[], cwd: string): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    const err = new TextDecoder().decode(out.stderr);
    throw new Error(`${cmd} ${args.join(" ")} failed:\n${err.slice(-3000)}`);
  }
  return text;
}

async function prepare(work: string, prebuilt: string | undefined): Promise<Prepared> {
  const packageDir = prebuilt ?? `${work}/package`;
  if (prebuilt === undefined) await buildNpm(packageDir);
  const packageJson = JSON.parse(await Deno.readTextFile(`${packageDir}/package.json`));
  const packed = JSON.parse(
    await run("npm", ["pack", packageDir, "--json", "--pack-destination", work], work),
  ) as { filename: string }[];
  const tarball = `${work}/${packed[0]!.filename}`;

  const app = `${work}/app`;
  await Deno.mkdir(app, { recursive: true });
  await Deno.writeTextFile(
    `${app}/package.json`,
    JSON.stringify({ name: "agentmem-runtime-tests", private: true, type: "module" }) + "\n",
  );
  const imports = JSON.parse(await Deno.readTextFile(`${ROOT}tests/deno.json`)).imports;
  const pins = TEST_MODULES.map((name) => String(imports[name]).replace(/^npm:/, ""));
  await run("npm", [
    "install",
    "--no-audit",
    "--no-fund",
    "--prefer-offline",
    "--ignore-scripts",
    tarball,
    ...pins,
  ], app);

  await build({
    cwd: ROOT,
    config: false,
    logLevel: "warn",
    entry: Object.fromEntries(ENTRIES.map((name) => [name, `${HERE}${name}.ts`])),
    outDir: app,
    clean: false,
    format: "esm",
    platform: "node",
    target: "node22",
    sourcemap: false,
    dts: false,
    deps: { neverBundle: [/^node:/, /^@nats-io\//, "@agentmem/memory"] },
    plugins: [{
      name: "agentmem-package",
      resolveId(source: string, importer: string | undefined) {
        if (importer === undefined || !source.startsWith(".")) return null;
        const path = new URL(source, `file://${importer}`).pathname;
        return path === MOD ? { id: "@agentmem/memory", external: true } : null;
      },
    }],
  });
  for (const name of ENTRIES) await Deno.stat(`${app}/${name}.mjs`);
  return { app, packageDir, packageJson };
}

if (import.meta.main) {
  const [work, prebuilt] = Deno.args;
  if (!work) throw new Error("usage: prepare.ts <work dir> [<prebuilt package dir>]");
  console.log(JSON.stringify(await prepare(work, prebuilt)));
}
