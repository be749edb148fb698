// A POSIX shell in which `agentmem` is this checkout's operator CLI, installed as the docs say
// (`deno install`), so that a shell line from the docs or the CLI's help runs exactly as printed
// (quotes, pipes and redirects included). Each line runs through the one spawner, with a time
// limit.

import { denoEnv, ROOT_CONFIG } from "./deno_child.ts";
import { type Child, spawnChild } from "./spawn.ts";
import { tempDir } from "./temp_dir.ts";

const CLI = new URL("../../cli.ts", import.meta.url).pathname;

/** How one shell line ended. */
export interface LineResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A shell with `agentmem` on its PATH; disposing of it removes the launcher. */
export interface AgentmemShell extends AsyncDisposable {
  /** Runs `line` with `sh -c` in `cwd`, in a small environment. */
  run(line: string, cwd: string): Promise<LineResult>;
  /**
   * Starts `line` (a command that runs until stopped, such as `agentmem serve`) in place of the
   * shell, so a signal reaches it; its lines are `{ t: "raw", line }` records.
   */
  start(line: string, cwd: string): Child;
}

/** The install line the docs give (docs/cli.md); the tests run it on this checkout's cli.ts. */
export const INSTALL_LINE = "deno install -g -A -n agentmem jsr:@agentmem/memory/cli";

/**
 * Installs `agentmem` into a temporary root with the docs' install line, this checkout's cli.ts
 * (and its configuration) standing in for the JSR package.
 */
export async function agentmemShell(): Promise<AgentmemShell> {
  const bin = await tempDir("agentmem-bin-");
  const args = INSTALL_LINE.split(" ").slice(1)
    .flatMap((a) => a === "jsr:@agentmem/memory/cli" ? ["--config", ROOT_CONFIG, CLI] : [a]);
  {
    await using install = spawnChild(Deno.execPath(), args, {
      name: "deno install agentmem",
      env: { ...denoEnv(), DENO_INSTALL_ROOT: bin.path },
    });
    const out = await install.finished();
    if (out.code !== 0) throw new Error(`${INSTALL_LINE} failed:\n${out.stderr}`);
  }
  const environment = () => ({
    PATH: `${bin.path}/bin:${Deno.env.get("PATH") ?? ""}`,
    HOME: Deno.env.get("HOME") ?? "",
    ...denoEnv(),
  });
  return {
    run: async (line, cwd) => {
      await using child = spawnChild("sh", ["-c", line], {
        name: `sh -c ${line.slice(0, 60)}`,
        cwd,
        clearEnv: true,
        env: environment(),
        timeLimitMs: 60_000,
      });
      const { code, stdout, stderr } = await child.finished();
      return { code, stdout, stderr };
    },
    start: (line, cwd) =>
      spawnChild("sh", ["-c", `exec ${line}`], {
        name: `sh -c ${line.slice(0, 60)}`,
        cwd,
        clearEnv: true,
        env: environment(),
        rawLines: true,
        timeLimitMs: 60_000,
      }),
    [Symbol.asyncDispose]: () => bin[Symbol.asyncDispose](),
  };
}
