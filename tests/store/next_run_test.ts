// A run shared by the calls that ask while one goes on must have started after each of them asked:
// what store/next_run.ts promises, and what the file backend's group commit (a flush covers the
// writes before it) and the jetstream backend's shared counts (docs/design/jetstream.md,
// "Capacity") rest on.

import assert from "node:assert/strict";
import { NextRun } from "../../store/next_run.ts";

// Runs that start when asked and end when `end()` is called, oldest first.
function runs() {
  const ends: ((fail: boolean) => void)[] = [];
  let started = 0;
  const shared = new NextRun(() => {
    const run = ++started;
    return new Promise<number>((resolve, reject) => {
      ends.push((fail) => fail ? reject(new Error(`run ${run} failed`)) : resolve(run));
    });
  });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
  return {
    shared,
    started: () => started,
    end: async (fail = false) => {
      ends.shift()!(fail);
      await settle();
    },
  };
}

Deno.test("next run: a call made while a run goes on gets the next run, which starts after it and serves every call that asked meanwhile", async () => {
  const r = runs();
  const first = r.shared.next();
  const [a, b] = [r.shared.next(), r.shared.next()];
  assert.equal(r.started(), 1, "the calls made during run 1 wait for run 2");
  await r.end();
  assert.equal(await first, 1);
  assert.equal(r.started(), 2, "run 2 starts once run 1 ends");
  const c = r.shared.next(); // asked during run 2: run 3
  await r.end();
  assert.deepEqual(await Promise.all([a, b]), [2, 2]);
  assert.equal(r.started(), 3);
  await r.end();
  assert.equal(await c, 3);
  assert.equal(r.started(), 3, "no run without a call");
  const alone = r.shared.next(); // nothing running: starts at once
  assert.equal(r.started(), 4);
  await r.end();
  assert.equal(await alone, 4);
});

Deno.test("next run: a failed run fails only the calls it served; those waiting get the next run", async () => {
  const r = runs();
  const first = r.shared.next();
  const waiting = r.shared.next();
  const failed = assert.rejects(first, /run 1 failed/);
  await r.end(true);
  await failed;
  assert.equal(r.started(), 2);
  await r.end();
  assert.equal(await waiting, 2);
});
