// `agentmem import` of input no valid dump holds: a line far longer than any record is refused as
// too long at the first chunk past the limit, without reading on (from standard input, the
// writer finds the pipe closed), and in bounded memory; a dump of many bad lines is refused with
// a count, not with every problem held.

import assert from "node:assert/strict";
import { ROOT_CONFIG } from "../_lib/deno_child.ts";
import { type Child, spawnDeno } from "../_lib/spawn.ts";
import { tempDir } from "../_lib/temp_dir.ts";

const CLI = new URL("../../cli.ts", import.meta.url).pathname;
const MIB = 1 << 20;
const HUGE = 528 * MIB;
const MAX_RSS_KB = 400 * 1024;

function importCli(cwd: string, args: string[], stdin: boolean): Child {
  return spawnDeno(CLI, ["import", "--dir", "m", ...args], {
    name: "cli import",
    config: ROOT_CONFIG,
    cwd,
    ...(stdin ? { stdin: "piped" as const } : {}),
  });
}

// Polls the child's resident memory until it exits, and the peak seen; kills it once it passes
// MAX_RSS_KB (which the caller then reports).
async function watchMemory(child: Child): Promise<number> {
  let exited = false;
  child.status.then(() => (exited = true));
  let peak = 0;
  while (!exited) {
    const status = await Deno.readTextFile(`/proc/${child.pid}/status`).catch(() => "");
    peak = Math.max(peak, Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0));
    if (peak > MAX_RSS_KB) child.kill();
    await new Promise((r) => setTimeout(r, 10));
  }
  return peak;
}

const REFUSAL = "agentmem: line 1: longer than 1048576 bytes, more than any record takes\n" +
  "agentmem: nothing imported (a line too long)\n";

Deno.test("cli import refuses a 528 MiB line from standard input as too long, reading no further", async () => {
  await using t = await tempDir();
  await using child = importCli(t.path, [], true);
  const memory = watchMemory(child);
  const chunk = new Uint8Array(MIB).fill(0x61); // "a", no newline
  let written = 0;
  try {
    while (written < HUGE) {
      await child.write(chunk);
      written += chunk.length;
    }
  } catch {
    // The import stopped reading and exited: the pipe is closed.
  }
  const peak = await memory;
  assert.ok(peak < MAX_RSS_KB, `the import grew to ${peak} kB`);
  const out = await child.finished();
  assert.equal(out.stderr, REFUSAL);
  assert.equal(out.code, 1);
  assert.ok(written < 16 * MIB, `the import read ${written / MIB} MiB before refusing`);
  assert.deepEqual([...Deno.readDirSync(t.path)], [], "nothing was created");
});

Deno.test("cli import refuses a 528 MiB line in a file as too long, in bounded memory", async () => {
  await using t = await tempDir();
  // A sparse file: 528 MiB of NUL bytes (valid UTF-8) without a newline, and no disk space.
  const file = await Deno.open(`${t.path}/huge.jsonl`, { write: true, create: true });
  await file.truncate(HUGE);
  file.close();
  await using child = importCli(t.path, ["huge.jsonl", "--json"], false);
  const peak = await watchMemory(child);
  assert.ok(peak < MAX_RSS_KB, `the import grew to ${peak} kB`);
  const out = await child.finished();
  assert.equal(out.code, 1);
  assert.deepEqual(JSON.parse(out.stdout), {
    written: false,
    problems: [{ line: 1, message: "longer than 1048576 bytes, more than any record takes" }],
  });
});

Deno.test("cli import of 100,000 bad lines counts them and keeps only the first", async () => {
  await using t = await tempDir();
  await Deno.writeTextFile(`${t.path}/bad.jsonl`, "x\n".repeat(100_000));
  await using child = importCli(t.path, ["bad.jsonl"], false);
  const out = await child.finished();
  assert.equal(out.code, 1);
  const lines = out.stderr.split("\n");
  assert.equal(lines[0], "agentmem: line 1: not a JSON value");
  assert.equal(lines[49], "agentmem: line 50: not a JSON value");
  assert.equal(lines[50], "agentmem: … and 99950 more");
  assert.equal(lines[51], "agentmem: nothing imported (100000 bad lines)");
});
