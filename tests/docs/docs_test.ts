// The docs run as printed. For each page of README.md and docs/, in a fresh folder, twice in a row:
// every TypeScript block is type-checked (the first time) and run in a process of its own, which
// must exit on its own, successfully; every shell line that runs `agentmem` runs in a shell where
// the CLI is installed as docs/cli.md says, and must succeed (`agentmem serve` must print its URL
// and stop cleanly on SIGINT). A page that names the default NATS
// URL gets a private nats-server in its place; a block that calls a model API gets a scripted model
// (_model.ts) in place of the API.

import assert from "node:assert/strict";
import { agentmemShell, INSTALL_LINE } from "../_lib/agentmem_shell.ts";
import { denoEnv, TEST_CONFIG } from "../_lib/deno_child.ts";
import { type NatsServer, needsNats, startNatsServer } from "../_lib/nats_server.ts";
import { spawnChild } from "../_lib/spawn.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { type Block, blocksOf } from "./_blocks.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const MODEL = new URL("./_model.ts", import.meta.url).pathname;
/** The NATS URL the docs show; a page's private server takes its place. */
const NATS_URL = "nats://127.0.0.1:4222";
/** What a block imports when it calls a model through an SDK. */
const SDK = /from "(@anthropic-ai\/sdk|openai|ai)["/]/;

function pages(): string[] {
  const found = ["README.md"];
  const walk = (dir: string) => {
    for (
      const e of [...Deno.readDirSync(`${ROOT}${dir}`)].sort((a, b) => a.name < b.name ? -1 : 1)
    ) {
      if (e.isDirectory) walk(`${dir}/${e.name}`);
      else if (e.name.endsWith(".md")) found.push(`${dir}/${e.name}`);
    }
  };
  walk("docs");
  return found;
}

// Runs one TypeScript block as a program of its own.
async function runTs(source: string, o: { cwd: string; file: string; check: boolean }) {
  await Deno.writeTextFile(o.file, source);
  const model = SDK.test(source);
  await using child = spawnChild(Deno.execPath(), [
    "run",
    "--config",
    TEST_CONFIG,
    "--no-prompt",
    "--allow-all",
    ...(o.check ? ["--check"] : []),
    ...(model ? ["--preload", MODEL] : []),
    o.file,
  ], {
    name: o.file.split("/").at(-1)!,
    cwd: o.cwd,
    env: {
      ...denoEnv(),
      ...(model ? { ANTHROPIC_API_KEY: "scripted", OPENAI_API_KEY: "scripted" } : {}),
    },
    // A block that does not exit on its own (an open connection, say) fails here.
    timeLimitMs: 90_000,
  });
  return await child.finished();
}

for (const page of pages()) {
  const markdown = Deno.readTextFileSync(`${ROOT}${page}`);
  const blocks = blocksOf(markdown);
  const runs = blocks.some((b) =>
    b.kind === "ts" || b.commands.some((c) => c.startsWith("agentmem "))
  );
  if (!runs) continue;
  const nats = markdown.includes(NATS_URL);
  Deno.test({
    name: `docs: ${page} runs as printed, twice in a row in a fresh folder`,
    ...(nats ? needsNats() : {}),
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      await using cwd = await tempDir("agentmem-docs-");
      await using work = await tempDir("agentmem-docs-src-");
      await using shell = await agentmemShell();
      let server: NatsServer | undefined;
      try {
        if (nats) server = await startNatsServer();
        const here = (text: string) =>
          server === undefined ? text : text.replaceAll(NATS_URL, server.url);
        for (const pass of [1, 2]) {
          for (const [i, block] of blocks.entries()) {
            const where = `${page}:${block.line} (run ${pass})`;
            await runBlock(block, {
              where,
              cwd: cwd.path,
              here,
              shell,
              pass,
              index: i,
              work: work.path,
            });
          }
        }
      } finally {
        await server?.stop();
      }
    },
  });
}

async function runBlock(
  block: Block,
  o: {
    where: string;
    cwd: string;
    work: string;
    pass: number;
    index: number;
    here: (text: string) => string;
    shell: Awaited<ReturnType<typeof agentmemShell>>;
  },
): Promise<void> {
  if (block.kind === "ts") {
    const r = await runTs(o.here(block.source), {
      cwd: o.cwd,
      file: `${o.work}/block${o.index}.ts`,
      check: o.pass === 1,
    });
    assert.equal(r.code, 0, `${o.where} failed:\n${r.stdout}${r.stderr}`);
    return;
  }
  for (const command of block.commands) {
    // The install line is how the shell got its agentmem; the others run in it.
    if (command.includes("-n agentmem")) {
      assert.equal(command, INSTALL_LINE, `${o.where}: the install line the tests run`);
      continue;
    }
    if (!command.startsWith("agentmem ")) continue;
    if (command.startsWith("agentmem serve")) {
      // It serves until stopped: it prints its URL, and stops cleanly on SIGINT.
      await using console = o.shell.start(o.here(command), o.cwd);
      await console.next((r) => / at http:\/\/[^ ]+\/\?token=/.test(String(r.line)));
      console.kill("SIGINT");
      assert.equal((await console.status).code, 0, `${o.where}: ${command}`);
      continue;
    }
    const r = await o.shell.run(o.here(command), o.cwd);
    assert.equal(r.code, 0, `${o.where}: ${command}\n${r.stdout}${r.stderr}`);
  }
}

Deno.test("docs: every page that shows agentmem installs it the same way", () => {
  const lines = pages().flatMap((page) =>
    blocksOf(Deno.readTextFileSync(`${ROOT}${page}`)).flatMap((b) =>
      b.kind === "sh" ? b.commands.filter((c) => c.includes("-n agentmem")) : []
    )
  );
  assert.ok(lines.length >= 2, "README.md and docs/cli.md show the install");
  for (const line of lines) assert.equal(line, INSTALL_LINE);
});

Deno.test("docs: every relative link of README.md, CONTRIBUTING.md and docs/ names a file (and a heading) that exists", () => {
  const slug = (heading: string) =>
    heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replaceAll(" ", "-");
  const broken: string[] = [];
  for (const page of [...pages(), "CONTRIBUTING.md"]) {
    const text = Deno.readTextFileSync(`${ROOT}${page}`).replace(/^```[\s\S]*?^```$/gm, "");
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [path, fragment] = target!.split("#") as [string, string | undefined];
      const file = path === ""
        ? page
        : new URL(path, `file://${ROOT}${page}`).pathname.slice(ROOT.length);
      let body: string | undefined;
      try {
        const info = Deno.statSync(`${ROOT}${file}`);
        body = info.isFile ? Deno.readTextFileSync(`${ROOT}${file}`) : undefined;
      } catch {
        broken.push(`${page}: ${target} (no such file)`);
        continue;
      }
      if (fragment === undefined || body === undefined) continue;
      const headings = [...body.matchAll(/^#+ (.*)$/gm)].map((m) => slug(m[1]!));
      if (!headings.includes(fragment)) broken.push(`${page}: ${target} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});
