// Builds the fsync shim (fsync_shim.c) with the system's gcc, and the environment that makes a
// worker process use it. Needs the "gcc" tool of tests/_lib/needs.ts.

import { spawnChild } from "../_lib/spawn.ts";

const SOURCE = new URL("./fsync_shim.c", import.meta.url).pathname;

/** Which syncs the shim turns into no-ops. */
export type Skip = "dirs" | "files";

let built: Promise<string> | undefined;

/** The path of the shim, compiled once per process into a temp directory. */
export function shimLibrary(): Promise<string> {
  built ??= (async () => {
    const dir = await Deno.makeTempDir({ prefix: "agentmem-shim-" });
    // The library lives as long as this process: removed when it exits.
    globalThis.addEventListener("unload", () => {
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch {
        // Gone already.
      }
    });
    const lib = `${dir}/fsync_shim.so`;
    const out = await spawnChild("gcc", [
      "-shared",
      "-fPIC",
      "-O2",
      "-Wall",
      "-Werror",
      "-o",
      lib,
      SOURCE,
      "-ldl",
    ]).finished();
    if (!out.success) {
      throw new Error(
        `gcc could not build the fsync shim: ${out.stderr}`,
      );
    }
    return lib;
  })();
  return built;
}

/** The environment of a process whose `skip` syncs do nothing. */
export async function shimEnv(skip: Skip): Promise<Record<string, string>> {
  return { LD_PRELOAD: await shimLibrary(), POWERCUT_SKIP_FSYNC: skip };
}

/**
 * The environment of a process whose syncs of paths containing `text` (ending with it, when
 * `text` ends with `$`) first wait `ms`.
 */
export async function stallEnv(ms: number, text: string): Promise<Record<string, string>> {
  return { LD_PRELOAD: await shimLibrary(), POWERCUT_STALL_FSYNC: `${ms}:${text}` };
}
