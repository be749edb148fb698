// The symlink flipper run (tests/file/flipper_test.ts on Deno, tests/runtimes on Node): writers
// hammer a file store while a separate process swaps `.history` or `.history/<key>` for a symlink
// to a directory outside the store, 25+ rounds per target. Nothing outside may be created,
// changed or removed; every failure the writers see must be a MemoryError.

import assert from "node:assert/strict";
import { type Child, spawnDeno } from "../_lib/spawn.ts";
import { openFileStore } from "../../mod.ts";

const FLIPPER = new URL("./flipper.ts", import.meta.url).pathname;
/** The keys the writers write. */
export const FLIP_KEYS = ["k1", "k2", "k3"];
/** What a flip run swaps: the history directory, and one key's directory in it. */
export const FLIP_TARGETS = [".history", ".history/k1"] as const;

/** Every name under `dir` (recursively, symlinks not followed) with its identity and bytes. */
export function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string, rel: string) => {
    for (const e of Deno.readDirSync(d)) {
      const path = `${d}/${e.name}`;
      const st = Deno.lstatSync(path);
      const id = `${st.ino}:${st.size}:${st.mtime?.getTime()}:${st.mode}`;
      if (e.isDirectory) {
        out.set(`${rel}${e.name}/`, id);
        walk(path, `${rel}${e.name}/`);
      } else out.set(`${rel}${e.name}`, e.isFile ? `${id}:${Deno.readTextFileSync(path)}` : id);
    }
  };
  walk(dir, "");
  return out;
}

// A directory outside the store that looks like history: a key's directory with versions.
function bait(outside: string): void {
  Deno.mkdirSync(`${outside}/k1`, { recursive: true });
  for (const n of ["1.md", "2.md", "3.md", "cut", "notes.txt"]) {
    Deno.writeTextFileSync(`${outside}/k1/${n}`, `outside ${n}\n`);
  }
  Deno.writeTextFileSync(`${outside}/.expired`, "outside\n");
}

/**
 * Runs `writers` writers (started by `start`) against a store in `root`/store while the flipper
 * swaps `target`, `rounds` times; asserts nothing outside changed, and returns what the writers
 * saw.
 */
export async function flipRun(o: {
  root: string;
  target: (typeof FLIP_TARGETS)[number];
  rounds: number;
  writers: number;
  start: (job: { dir: string; ms: number; keys: string[] }) => Child;
}): Promise<{ counts: Record<string, number>; swapped: number }> {
  const dir = `${o.root}/store`;
  const outside = `${o.root}/outside`;
  bait(outside);
  const store = await openFileStore({ dir });
  for (const k of FLIP_KEYS) await store.create(k, `about ${k}`, "first");
  const before = snapshot(outside);
  const ms = o.rounds * 12 + 500;
  const writers = Array.from(
    { length: o.writers },
    () => o.start({ dir, ms, keys: FLIP_KEYS }),
  );
  const counts: Record<string, number> = {};
  let swapped = 0;
  try {
    await Promise.all(writers.map((w) => w.waitFor("ready")));
    const target = o.target === ".history" ? outside : `${outside}/k1`;
    await using flipper = spawnDeno(FLIPPER, [
      JSON.stringify({ dir, target: o.target, outside: target, rounds: o.rounds }),
    ], { name: `flipper ${o.target}` });
    swapped = Number((await flipper.waitFor("done")).swapped);
    for (const w of writers) {
      const done = await w.waitFor("done");
      assert.deepEqual(done.untyped, [], `a writer failed with something not a MemoryError`);
      for (const [k, n] of Object.entries(done.counts as Record<string, number>)) {
        counts[k] = (counts[k] ?? 0) + n;
      }
    }
  } finally {
    for (const w of writers) await w[Symbol.asyncDispose]();
  }
  assert.deepEqual(snapshot(outside), before, "something outside the store changed");
  assert.ok(swapped >= o.rounds * 0.8, `the flipper swapped only ${swapped} of ${o.rounds} times`);
  return { counts, swapped };
}
