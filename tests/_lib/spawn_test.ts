// The worker spawner itself: records in order, the time limit that kills by pid, the errors that
// name the child and its stderr, and disposal.

import assert from "node:assert/strict";
import { spawnChild } from "./spawn.ts";

const SH = "sh";

Deno.test("spawn: a child's JSON lines are records; waitFor finds, next() reads in order", async () => {
  await using c = spawnChild(SH, [
    "-c",
    `echo '{"t":"a","n":1}'; echo 'not json'; echo '{"t":"b"}'; echo '{"t":"a","n":2}'`,
  ]);
  assert.equal((await c.waitFor("a")).n, 1);
  assert.equal((await c.waitFor("a")).n, 1, "waitFor finds the first, every time");
  assert.equal((await c.next("a")).n, 1);
  assert.equal((await c.next("a")).n, 2, "next() goes on after the last one it returned");
  const out = await c.succeeded();
  assert.equal(c.records.length, 3, "a line that is not JSON is skipped");
  assert.match(out.stdout, /not json/);
});

Deno.test("spawn: rawLines keeps lines that are not JSON", async () => {
  await using c = spawnChild(SH, ["-c", "echo hello"], { rawLines: true });
  await c.finished();
  assert.deepEqual(c.records, [{ t: "raw", line: "hello" }]);
});

Deno.test("spawn: past its time limit a child is SIGKILLed and waits fail naming it and its stderr", async () => {
  await using c = spawnChild(SH, ["-c", "echo 'about to hang' >&2; exec sleep 600"], {
    name: "the hanging child",
    timeLimitMs: 300,
  });
  const started = Date.now();
  await assert.rejects(
    c.waitFor("never"),
    (e: Error) =>
      /the hanging child \(pid \d+\) ran past its time limit of 300 ms/.test(e.message) &&
      e.message.includes("about to hang"),
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((
    resolve,
  ) => (timer = setTimeout(() => resolve(undefined), 10_000)));
  const status = await Promise.race([c.status, late]);
  clearTimeout(timer);
  assert.equal(status?.signal, "SIGKILL", "killed at the limit, not left running");
  assert.ok(c.timedOut);
  assert.ok(Date.now() - started < 10_000, "killed at the limit, not at the sleep's end");
  await assert.rejects(c.finished(), /ran past its time limit/);
});

Deno.test("spawn: a wait fails when the child ends without the record, naming its stderr", async () => {
  await using c = spawnChild(SH, ["-c", "echo 'went wrong' >&2; exit 3"], { name: "quitter" });
  await assert.rejects(
    c.waitFor("ready"),
    (e: Error) =>
      /quitter \(pid \d+\) ended its output before "ready"/.test(e.message) &&
      e.message.includes("went wrong"),
  );
  await assert.rejects(c.succeeded(), /quitter \(pid \d+\) exited with 3; stderr:\nwent wrong/);
  assert.equal((await c.finished()).code, 3);
});

Deno.test("spawn: disposal kills a child that still runs", async () => {
  let status: Promise<Deno.CommandStatus>;
  {
    await using c = spawnChild(SH, ["-c", "exec sleep 600"]);
    status = c.status;
  }
  assert.equal((await status).signal, "SIGKILL");
});

Deno.test("spawn: send() writes stdin and closes it; stdoutBytes are the exact bytes", async () => {
  await using c = spawnChild(SH, ["-c", "cat"], { stdin: "piped" });
  await c.send("caf\u00e9\n");
  const out = await c.succeeded();
  assert.equal(out.stdout, "caf\u00e9\n");
  assert.deepEqual(out.stdoutBytes, new TextEncoder().encode("caf\u00e9\n"));
});
