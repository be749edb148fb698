// `deno task build:npm [outDir]`: builds the npm package `@agentmem/memory` for Node and Bun from
// mod.ts and the CLI's Node entry (cli/bin.ts, the package's `agentmem` bin): ESM bundles (the
// chunks both share and the ones loaded on demand included) and one bundled declaration file made
// by tsdown (rolldown, with tsc for the types), a package.json whose dependencies are exactly the
// npm modules the two entries import at the versions pinned in deno.json, and the README and
// LICENSE. The JSR publish is unaffected.

import { build } from "tsdown";
import "typescript"; // tsdown's peer for the declarations; imported so Deno resolves this pin

const ROOT = new URL("../", import.meta.url);
const ENTRY = "mod.ts";
/** The operator CLI's Node entry, bundled as the package's `agentmem` bin. */
const CLI_ENTRY = "cli/bin.ts";
const JS = "index.mjs";
const CLI_JS = "cli.mjs";
const TYPES = "index.d.mts";
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
    ...await runtimeDependencies(root, config, CLI_ENTRY),
  };
  await Deno.remove(outDir, { recursive: true }).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  });
  await build({
    cwd: root,
    config: false,
    logLevel: "warn",
    entry: { index: `${root}${ENTRY}`, cli: `${root}${CLI_ENTRY}` },
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
  for (const file of [JS, TYPES, CLI_JS]) {
    if (!(await exists(`${outDir}/${file}`))) throw new Error(`tsdown wrote no ${file}`);
  }
  // The bin runs as a program: Node's shebang line first.
  const cli = await Deno.readTextFile(`${outDir}/${CLI_JS}`);
  await Deno.writeTextFile(`${outDir}/${CLI_JS}`, `#!/usr/bin/env node\n${cli}`);
  // Code both entries share lands in chunks of its own, which the package must carry too.
  const chunks: string[] = [];
  for await (const e of Deno.readDir(outDir)) {
    if (e.isFile && e.name.endsWith(".mjs") && e.name !== JS && e.name !== CLI_JS) {
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
    exports: { ".": { types: `./${TYPES}`, default: `./${JS}` } },
    main: `./${JS}`,
    types: `./${TYPES}`,
    bin: { agentmem: `./${CLI_JS}` },
    files: [JS, TYPES, CLI_JS, ...chunks.sort(), "README.md", "LICENSE"],
    engines: { node: NODE_ENGINE },
    keywords: ["llm", "agent", "memory", "nats", "jetstream", "deno", "bun"],
    dependencies,
  };
  await Deno.writeTextFile(`${outDir}/package.json`, JSON.stringify(pkg, null, 2) + "\n");
  await Deno.copyFile(`${root}README.md`, `${outDir}/README.md`);
  await Deno.copyFile(`${root}LICENSE`, `${outDir}/LICENSE`);
  const leftovers: string[] = [];
  for (const file of [JS, CLI_JS, ...chunks]) {
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
