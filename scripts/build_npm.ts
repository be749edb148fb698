// `deno task build:npm [outDir]`: builds the npm package `@agentmem/memory` for Node and Bun from
// mod.ts (`.`), the CLI's entry function (cli/main.ts, `./cli`, as JSR's `./cli` exports it) and
// its Node program (cli/bin.ts, the package's `agentmem` bin): ESM bundles (the chunks they share
// and the ones loaded on demand included) and bundled declarations made by tsdown (rolldown, with
// tsc for the types), a package.json whose dependencies are exactly the npm modules the entries
// import at the versions pinned in deno.json, and the README and LICENSE. The JSR publish is
// unaffected.

import { build } from "tsdown";
import "typescript"; // tsdown's peer for the declarations; imported so Deno resolves this pin

const ROOT = new URL("../", import.meta.url);
const ENTRY = "mod.ts";
/** The operator CLI's entry function: the package's `./cli`. */
const CLI_ENTRY = "cli/main.ts";
/** The operator CLI's Node program, bundled as the package's `agentmem` bin. */
const BIN_ENTRY = "cli/bin.ts";
const JS = "index.mjs";
const CLI_JS = "cli.mjs";
const BIN_JS = "bin.mjs";
const TYPES = "index.d.mts";
const CLI_TYPES = "cli.d.mts";
/** The oldest Node release the package is tested on (tests/runtimes/runtimes_test.ts). */
const NODE_ENGINE = ">=22";

interface DenoConfig {
  readonly name: string;
  readonly version: string;
  readonly license: string;
  readonly imports: Record<string, string>;
}

/** Builds the package into `outDir` (emptied first) and returns its package.json. */
export async function buildNpm(outDir: string): Promise<Record<string, unknown>> {
  const root = fromFileUrl(ROOT);
  const config = JSON.parse(await Deno.readTextFile(`${root}deno.json`)) as DenoConfig;
  const dependencies = {
    ...await runtimeDependencies(root, config, ENTRY),
    ...await runtimeDependencies(root, config, BIN_ENTRY),
  };
  await Deno.remove(outDir, { recursive: true }).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  });
  await build({
    cwd: root,
    config: false,
    logLevel: "warn",
    entry: { index: `${root}${ENTRY}`, cli: `${root}${CLI_ENTRY}`, bin: `${root}${BIN_ENTRY}` },
    outDir,
    format: "esm",
    platform: "node",
    target: "node22",
    sourcemap: false,
    clean: false,
    deps: { neverBundle: [/^node:/, ...Object.keys(dependencies).map(exact)] },
    dts: {
      tsconfig: false,
      compilerOptions: {
        allowImportingTsExtensions: true,
        strict: true,
        skipLibCheck: true,
        lib: ["es2023", "dom"],
      },
    },
  });
  for (const file of [JS, TYPES, CLI_JS, CLI_TYPES, BIN_JS]) {
    if (!(await exists(`${outDir}/${file}`))) throw new Error(`tsdown wrote no ${file}`);
  }
  // The bin runs as a program: Node's shebang line first. Its declarations are of no use.
  const bin = await Deno.readTextFile(`${outDir}/${BIN_JS}`);
  await Deno.writeTextFile(`${outDir}/${BIN_JS}`, `#!/usr/bin/env node\n${bin}`);
  await Deno.remove(`${outDir}/bin.d.mts`).catch(() => {});
  // Code the entries share lands in chunks of its own (with their declarations), which the
  // package must carry too.
  const entries = [JS, CLI_JS, BIN_JS, TYPES, CLI_TYPES];
  const chunks: string[] = [];
  for await (const e of Deno.readDir(outDir)) {
    if (e.isFile && /\.(mjs|d\.mts)$/.test(e.name) && !entries.includes(e.name)) {
      chunks.push(e.name);
    }
  }
  const pkg = {
    name: config.name,
    version: config.version,
    description:
      "A durable memory for LLM agent harnesses: file and NATS JetStream backends, model-facing tools",
    license: config.license,
    type: "module",
    exports: {
      ".": { types: `./${TYPES}`, default: `./${JS}` },
      "./cli": { types: `./${CLI_TYPES}`, default: `./${CLI_JS}` },
    },
    main: `./${JS}`,
    types: `./${TYPES}`,
    bin: { agentmem: `./${BIN_JS}` },
    files: [...entries, ...chunks.sort(), "README.md", "LICENSE"],
    engines: { node: NODE_ENGINE },
    keywords: ["llm", "agent", "memory", "nats", "jetstream", "deno", "bun"],
    dependencies,
  };
  await Deno.writeTextFile(`${outDir}/package.json`, JSON.stringify(pkg, null, 2) + "\n");
  await Deno.copyFile(`${root}README.md`, `${outDir}/README.md`);
  await Deno.copyFile(`${root}LICENSE`, `${outDir}/LICENSE`);
  const leftovers: string[] = [];
  for (const file of [JS, CLI_JS, BIN_JS, ...chunks.filter((c) => c.endsWith(".mjs"))]) {
    leftovers.push(...denoGlobalUses(await Deno.readTextFile(`${outDir}/${file}`)));
  }
  if (leftovers.length > 0) {
    console.error(
      `warning: the bundle still uses the Deno global on ${leftovers.length} lines ` +
        `(first: ${leftovers[0]}); those paths fail on Node and Bun`,
    );
  }
  return pkg;
}

// The npm modules an entry imports (as Deno's module graph records them, type-only imports
// included, since the declarations name them), each at the version deno.json pins.
async function runtimeDependencies(
  root: string,
  config: DenoConfig,
  entry: string,
): Promise<Record<string, string>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: root,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`deno info ${entry} failed`);
  const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: { specifier: string }[];
  };
  const deps: Record<string, string> = {};
  for (const { specifier } of graph.modules) {
    const m = /^npm:\/?((?:@[^/@]+\/)?[^/@]+)@([^/]+)/.exec(specifier);
    if (!m) continue;
    const [, name, version] = m as unknown as [string, string, string];
    const pinned = config.imports[name];
    if (pinned !== `npm:${name}@${version}`) {
      throw new Error(`${entry} imports ${name}@${version}, but deno.json pins ${pinned}`);
    }
    deps[name] = version;
  }
  return Object.fromEntries(Object.entries(deps).sort(([a], [b]) => a < b ? -1 : 1));
}

/** Lines of a bundle, outside comments, that name the Deno global. */
export function denoGlobalUses(js: string): string[] {
  return js.split("\n")
    .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
    .filter((line) => /(?<![.\w$])Deno\./.test(line))
    .map((line) => line.trim());
}

function exact(name: string): RegExp {
  return new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}(?:/.*)?$`);
}

function fromFileUrl(url: URL): string {
  return decodeURIComponent(url.pathname);
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

if (import.meta.main) {
  const arg = Deno.args[0];
  const outDir = arg === undefined
    ? `${fromFileUrl(ROOT)}npm`
    : arg.startsWith("/")
    ? arg
    : `${Deno.cwd()}/${arg}`;
  const pkg = await buildNpm(outDir);
  console.log(`built ${pkg.name}@${pkg.version} in ${outDir}`);
}
