// How every Deno child process of the tests, the benchmark and the fault harness starts: from the
// cache `deno task prepare` filled before any test ran (`--cached-only`, so a child never downloads
// and never prints a download line), with the configuration it belongs to, and with the one
// environment variable Deno needs to find that cache even when the rest is cleared.

/** The configuration of tests, benchmark and scripts (the library's imports plus dev tools). */
export const TEST_CONFIG = new URL("../deno.json", import.meta.url).pathname;
/** The package's own configuration: what a user's `deno task demo` or CLI run resolves. */
export const ROOT_CONFIG = new URL("../../deno.json", import.meta.url).pathname;

let denoDir: string | undefined;

/** The Deno cache this process uses: `$DENO_DIR`, else the default Deno reports. */
export function denoCacheDir(): string {
  if (denoDir !== undefined) return denoDir;
  const fromEnv = Deno.env.get("DENO_DIR");
  if (fromEnv) return (denoDir = fromEnv);
  const out = new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
    env: { NO_COLOR: "1" },
  }).outputSync();
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as { denoDir?: unknown };
  if (typeof info.denoDir !== "string") throw new Error("deno info --json named no denoDir");
  return (denoDir = info.denoDir);
}

/**
 * The arguments before a script for `deno run` in a child: its config, the cache only, no
 * permission prompt.
 */
export function denoRunArgs(config: string = TEST_CONFIG): string[] {
  return ["run", "--config", config, "--cached-only", "--no-prompt"];
}

/** The environment a Deno child needs besides its own variables. */
export function denoEnv(): Record<string, string> {
  return { DENO_DIR: denoCacheDir(), NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" };
}
