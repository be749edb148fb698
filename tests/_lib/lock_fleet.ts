// Writers for the file backend's lock tests as separate OS processes (tests/runtimes/lock_worker.ts):
// Deno from source (with every permission, or only the store's directory, so that it cannot read
// /proc), Node and Bun from the npm package's bundle; on the host, or several together inside one
// new pid namespace, with the host's /proc ("ns": `unshare -p -f`, where process.pid names another
// process in /proc) or with a /proc of their own ("container": `unshare -p -f --mount-proc`).

import assert from "node:assert/strict";
import { openFileStore } from "../../mod.ts";
import { leftIn } from "./left_in.ts";
import { type Child, spawnChild } from "./spawn.ts";
import { denoEnv, denoRunArgs } from "./deno_child.ts";
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

/**
 * Runs `n` revision-checked increments of one counter in every writer of `groups` (each group on
 * the host or in its own namespace) over `dir`, listing often (which sweeps), and checks that
 * every writer finished without an error and every increment landed.
 */
export async function countTogether(
  dir: string,
  groups: ReadonlyArray<readonly [Where, readonly Runner[]]>,
  n = 120,
): Promise<void> {
  const store = await openFileStore({ dir, readBeforeUpdate: true });
  await store.create("counter", "counter", "0");
  const job = { job: "counter", dir, key: "counter", n, listEvery: 3 } as const;
  const procs = groups.flatMap(([where, runners]) =>
    startGroup(where, runners.map((r) => [r, job] as const))
  );
  const members = groups.reduce((sum, [, runners]) => sum + runners.length, 0);
  try {
    const ends = await Promise.all(procs.map((p) => p.finished()));
    for (const [i, end] of ends.entries()) {
      const errors = procs[i]!.records.filter((l) => l.t === "error");
      assert.equal(end.code, 0, `writers failed: ${JSON.stringify(errors)}\n${end.stderr}`);
    }
  } finally {
    for (const p of procs) await p[Symbol.asyncDispose]();
  }
  const done = procs.flatMap((p) => p.records.filter((l) => l.t === "done"));
  assert.equal(done.length, members);
  assert.equal((await store.read("counter")).content, String(n * members), "increments lost");
  // Every writer exited normally: it left no lock, no temp file and no shared lock file (the
  // history, the create marks and this process's own shared lock file are the store's).
  assert.deepEqual(leftIn(dir), ["counter.md"]);
}

/**
 * The content of a lock a live writer holds: a hammering writer's in `<root>/other`, read while
 * it holds it. `stop()` kills the writer, after which the content names a dead process.
 */
export async function liveLock(
  root: string,
): Promise<{ content: string; stop: () => Promise<void> }> {
  const dir = `${root}/other`;
  const store = await openFileStore({ dir, readBeforeUpdate: true });
  await store.create("busy", "busy", "0");
  const [hammer] = startGroup("host", [[denoRunner(), { job: "hammer", dir, key: "busy" }]]);
  const stop = () => hammer![Symbol.asyncDispose]();
  try {
    await hammer!.waitFor("first");
    for (;;) {
      const content = await Deno.readTextFile(`${dir}/.busy.lock`).catch(() => "");
      if (content !== "") return { content, stop };
    }
  } catch (e) {
    await stop();
    throw e;
  }
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}
