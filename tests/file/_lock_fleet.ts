// Writers for the file backend's lock tests as separate OS processes (tests/runtimes/lock_worker.ts):
// Deno from source (with every permission, or only the store's directory, so that it cannot read
// /proc), Node and Bun from the npm package's bundle; on the host, or several together inside one
// new pid namespace, with the host's /proc ("ns": `unshare -p -f`, where process.pid names another
// process in /proc) or with a /proc of their own ("container": `unshare -p -f --mount-proc`).

import { type Child, spawnChild } from "../_lib/spawn.ts";
import { denoEnv, denoRunArgs } from "../_lib/deno_child.ts";
import type { LockJob } from "../runtimes/lock_worker.ts";

const WORKER = new URL("../runtimes/lock_worker.ts", import.meta.url).pathname;

/** The command that runs one writer, before its job's JSON. */
export type Runner = readonly string[];

/** Where a group of writers runs. */
export type Where = "host" | "ns" | "container";

/** A Deno writer from source: with every permission, or with only `dir` (so no /proc). */
export function denoRunner(only?: string): Runner {
  const perms = only === undefined
    ? ["--allow-all"]
    : [`--allow-read=${only}`, `--allow-write=${only}`];
  return [Deno.execPath(), ...denoRunArgs(), ...perms, WORKER];
}

/** A Node or Bun writer from the bundled npm package in `app` (tests/runtimes/prepare.ts). */
export function bundleRunner(bin: string, app: string): Runner {
  return [bin, `${app}/lock_worker.mjs`];
}

/**
 * Starts one process per member, all on the host, or all inside one new pid namespace. Each
 * member prints its JSON lines to the one stdout; a group in a namespace dies with it.
 */
export function startGroup(
  where: Where,
  members: ReadonlyArray<readonly [Runner, LockJob]>,
): Child[] {
  const env = denoEnv();
  if (where === "host") {
    return members.map(([runner, job]) => {
      const [cmd, ...args] = [...runner, JSON.stringify(job)];
      return spawnChild(cmd!, args, { env, name: `${job.job} writer` });
    });
  }
  // One shell as the namespace's first process starts every member and fails if any fails.
  const lines = members.map(([runner, job], i) =>
    `${[...runner, JSON.stringify(job)].map(shellQuote).join(" ")} & p${i}=$!`
  );
  const waits = members.map((_, i) => `wait $p${i} || f=1`);
  const script = [...lines, ...waits, "exit ${f:-0}"].join("\n");
  const unshare = ["-p", "-f", "--kill-child", ...(where === "container" ? ["--mount-proc"] : [])];
  return [
    spawnChild("unshare", [...unshare, "sh", "-c", script], { env, name: `${where} writers` }),
  ];
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}
