// `agentmem check` on a file store lists what stands under the keys' lock names: something the
// library did not write (a problem: exit 1, with the file to remove), and a lock left by a writer
// that died (for the record: the next write removes it).

import assert from "node:assert/strict";
import { openFileStore } from "../../mod.ts";
import { cli, expectCli } from "../_lib/cli.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { liveLock } from "../_lib/lock_fleet.ts";

Deno.test("cli check lists lock names that block a key (exit 1) and dead writers' locks", async () => {
  await using t = await tempDir();
  const dir = `${t.path}/m`;
  const store = await openFileStore({ dir });
  await store.create("a", "first", "1");
  // A lock as a writer that has since died left it.
  const live = await liveLock(t.path);
  await live.stop();
  const dead = live.content;
  const fifo = await new Deno.Command("mkfifo", { args: [`${dir}/.a.lock`] }).output();
  assert.ok(fifo.success);
  await Deno.writeTextFile(`${dir}/.b.lock`, dead);
  // What a power cut leaves: the name without its content, older than the grace it gets.
  await Deno.writeTextFile(`${dir}/.c.lock`, "");
  const aged = new Date(Date.now() - 3_600_000);
  await Deno.utime(`${dir}/.c.lock`, aged, aged);
  // Read-only, so that opening sweeps nothing (a writable open removes dead writers' locks).
  const human = await cli(t.path, ["check", "--dir", "m", "--read-only"]);
  expectCli(human, {
    code: 1,
    stdout: [
      "file: 1 entry, 1 healthy, 0 problems, 1 lock to remove",
      '  ".a.lock": blocking lock: not a lock this library wrote (it is a FIFO); every write of the key fails until an operator removes it',
      '  ".b.lock": dead lock: left by a writer that died; the next write of the key removes it',
      '  ".c.lock": dead lock: left without content by a power cut; the next write of the key removes it',
      "",
    ],
    stderr: "",
  });
  const json = JSON.parse(
    (await cli(t.path, ["check", "--dir", "m", "--json", "--read-only"])).stdout,
  );
  assert.deepEqual(
    json.locks.map((l: { name: string; key: string; state: string }) => [l.name, l.key, l.state]),
    [[".a.lock", "a", "foreign"], [".b.lock", "b", "dead"], [".c.lock", "c", "dead"]],
  );
  assert.equal(await Deno.readTextFile(`${dir}/.b.lock`), dead);
  // A writable check lists the same blocking locks (the dead one may be swept by opening).
  const rw = await cli(t.path, ["check", "--dir", "m"]);
  assert.equal(rw.code, 1);
  const blocking = human.stdout.split("\n").filter((l) => l.includes("blocking lock"));
  for (const line of blocking) assert.ok(rw.stdout.includes(line), rw.stdout);
  // With the planted files gone and the dead lock broken by a write, the store is clean again.
  await Deno.remove(`${dir}/.a.lock`);
  await Deno.remove(`${dir}/.c.lock`).catch(() => {}); // opening for writes may have swept it
  const rbu = await openFileStore({ dir, readBeforeUpdate: true });
  await rbu.create("b", "second", "2");
  assert.equal(await rbu.delete("b"), true);
  const clean = await cli(t.path, ["check", "--dir", "m"]);
  assert.deepEqual([clean.code, clean.stdout], [0, "file: 1 entry, 1 healthy, 0 problems\n"]);
});
