// Whatever is planted under a key's lock name (`.<key>.lock`), a revision-checked update and a
// delete of that key answer at once and stay small: a lock this library did not write is refused
// with UnavailableError naming the key and the file to remove (and the audit lists it), a lock
// naming a live process that does not hold it is taken over, and so is one without content (what a
// power cut leaves) once it has been so for a second. Each call runs in a separate process
// watched from here, so a call that hangs or grows is killed and fails the test instead of
// freezing it (or, with a symlink to /dev/zero, eating the machine's memory).

import assert from "node:assert/strict";
import { auditStore, openFileStore } from "../../mod.ts";
import { leftIn } from "../_lib/left_in.ts";
import { denoRunner, liveLock, startGroup } from "../_lib/lock_fleet.ts";
import type { LockJob } from "../runtimes/lock_worker.ts";
import { type ChildRecord, spawnChild } from "../_lib/spawn.ts";
import { fileTest } from "./_fixture.ts";

// The grace a lock without content gets (backends/file/lock.ts EMPTY_GRACE_MS).
const EMPTY_GRACE_MS = 1_000;

const ANSWER_MS = 3000;
const KILL_AFTER_MS = 8000;
const MAX_RSS_KB = 400 * 1024;

type Plant = (lock: string, dir: string) => Promise<void>;

/** Runs one call in a worker; fails if it takes over KILL_AFTER_MS or grows past MAX_RSS_KB. */
async function once(job: LockJob): Promise<ChildRecord> {
  const [proc] = startGroup("host", [[denoRunner(), job]]);
  const p = proc!;
  const started = Date.now();
  let peakKb = 0;
  let exited = false;
  p.status.then(() => (exited = true));
  try {
    for (;;) {
      const result = p.records.find((l) => l.t === "result" || l.t === "error");
      if (result !== undefined) {
        // It exits by itself once it has answered, removing its shared lock file on the way; the
        // dispose below would kill it before that on a busy machine.
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise((r) => (timer = setTimeout(r, KILL_AFTER_MS)));
        await Promise.race([p.status, late]);
        clearTimeout(timer);
        return result;
      }
      if (exited) {
        const out = await p.finished();
        const last = p.records.find((l) => l.t === "result" || l.t === "error");
        if (last !== undefined) return last;
        assert.fail(`the worker exited without an answer: ${out.stderr}`);
      }
      // Gone already (it answered and exited): the next look finds its answer.
      const status = await Deno.readTextFile(`/proc/${p.pid}/status`).catch(() => "");
      const rss = /VmRSS:\s+(\d+) kB/.exec(status);
      peakKb = Math.max(peakKb, Number(rss?.[1] ?? 0));
      assert.ok(peakKb < MAX_RSS_KB, `the call grew the process to ${peakKb} kB`);
      assert.ok(Date.now() - started < KILL_AFTER_MS, "the call hung");
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await p[Symbol.asyncDispose]();
  }
}

async function mkfifo(path: string): Promise<void> {
  const out = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.ok(out.success);
}

const REFUSED: ReadonlyArray<readonly [string, Plant]> = [
  ["a FIFO", (lock) => mkfifo(lock)],
  ["a symlink to /dev/zero", (lock) => Deno.symlink("/dev/zero", lock)],
  ["a symlink to a file", async (lock, dir) => {
    await Deno.writeTextFile(`${dir}/../target`, "x");
    await Deno.symlink(`${dir}/../target`, lock);
  }],
  ["a directory", (lock) => Deno.mkdir(lock)],
  ["a unix socket", async (lock) => {
    // Bound by a process that exits: the socket file stays, with nobody listening.
    const script = "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])";
    const out = await new Deno.Command("/usr/bin/python3", { args: ["-c", script, lock] }).output();
    assert.ok(out.success);
  }],
  ["garbage", (lock) => Deno.writeTextFile(lock, "not a lock\n")],
  ["garbage with a modification time in the future", async (lock) => {
    await Deno.writeTextFile(lock, "x");
    const later = new Date(Date.now() + 365 * 86_400_000);
    await Deno.utime(lock, later, later);
  }],
];

for (const [what, plant] of REFUSED) {
  fileTest(
    `a lock name holding ${what} is refused at once, naming the file, and audited`,
    async (root) => {
      const dir = `${root}/m`;
      const store = await openFileStore({ dir, readBeforeUpdate: true });
      await store.create("k", "d", "v1");
      const lock = `${dir}/.k.lock`;
      await plant(lock, dir);
      for (const op of ["update", "delete"] as const) {
        const r = await once({ job: "once", dir, key: "k", op, timeoutMs: ANSWER_MS });
        assert.equal(r.t, "result", JSON.stringify(r));
        assert.equal(r.ok, false, `${op} went through ${what}`);
        assert.equal(r.code, "unavailable");
        assert.equal(r.key, "k");
        assert.match(String(r.message), /Cannot write memory "k": .*"\.k\.lock".*remove it/);
        assert.ok(Number(r.ms) < 1000, `${op} answered after ${r.ms} ms`);
      }
      const audit = await auditStore(store);
      assert.deepEqual(audit.locks?.map((l) => [l.name, l.key, l.state]), [[
        ".k.lock",
        "k",
        "foreign",
      ]]);
      assert.equal((await store.read("k")).content, "v1");
      // Once the operator removes it, writes go through again.
      await Deno.remove(lock, { recursive: true });
      const r = await once({ job: "once", dir, key: "k", op: "update", timeoutMs: ANSWER_MS });
      assert.equal(r.ok, true, JSON.stringify(r));
    },
  );
}

const AGED = new Date(Date.now() - 3_600_000);
const BLANK: ReadonlyArray<readonly [string, Plant]> = [
  ["an empty file an hour old", async (lock) => {
    await Deno.writeTextFile(lock, "");
    await Deno.utime(lock, AGED, AGED);
  }],
  ["NUL bytes an hour old (a size that reached the disk without its data)", async (lock) => {
    await Deno.writeFile(lock, new Uint8Array(60));
    await Deno.utime(lock, AGED, AGED);
  }],
  ["an empty file with a modification time in the future", async (lock) => {
    await Deno.writeTextFile(lock, "");
    const later = new Date(Date.now() + 365 * 86_400_000);
    await Deno.utime(lock, later, later);
  }],
];

for (const [what, plant] of BLANK) {
  fileTest(
    `a lock name holding ${what} (what a power cut leaves) is broken at once and audited as dead`,
    async (root) => {
      const dir = `${root}/m`;
      const store = await openFileStore({ dir, readBeforeUpdate: true });
      await store.create("k", "d", "v1");
      await plant(`${dir}/.k.lock`, dir);
      const audit = await auditStore(store);
      assert.deepEqual(audit.locks?.map((l) => [l.name, l.key, l.state]), [[
        ".k.lock",
        "k",
        "dead",
      ]]);
      const r = await once({ job: "once", dir, key: "k", op: "update", timeoutMs: ANSWER_MS });
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.ok(Number(r.ms) < 1000, `the update answered after ${r.ms} ms`);
      assert.deepEqual((await auditStore(store)).locks, []);
    },
  );
}

fileTest(
  "a lock file without content is waited for while it is young (a writer of an older version fills its lock just after making it), then broken",
  async (root) => {
    const dir = `${root}/m`;
    const store = await openFileStore({ dir, readBeforeUpdate: true });
    await store.create("k", "d", "v1");
    const lock = `${dir}/.k.lock`;
    await Deno.writeTextFile(lock, "");
    const made = (await Deno.stat(lock)).mtime!.getTime();
    await store.delete("k");
    // The delete broke the lock only once it had been empty for the grace period.
    assert.ok(Date.now() - made >= EMPTY_GRACE_MS, `broken after ${Date.now() - made} ms`);
    assert.equal(await store.delete("k"), false);
  },
);

fileTest(
  "a lock name holding a FIFO is never opened: a writer blocked on it stays blocked",
  async (root) => {
    const dir = `${root}/m`;
    const store = await openFileStore({ dir, readBeforeUpdate: true });
    await store.create("k", "d", "v1");
    const fifo = `${dir}/.k.lock`;
    await mkfifo(fifo);
    const script = 'printf "from the writer\\n" > "$0"';
    await using _writer = spawnChild("sh", ["-c", script, fifo], { name: "FIFO writer" });
    for (const op of ["update", "delete"] as const) {
      const r = await once({ job: "once", dir, key: "k", op, timeoutMs: ANSWER_MS });
      assert.equal(r.code, "unavailable");
    }
    await auditStore(store);
    // Still blocked: the line comes to the first reader, this one.
    const got = await new Promise<string>((resolve, reject) => {
      const guard = setTimeout(() => reject(new Error("the writer was released")), 5000);
      Deno.readTextFile(fifo).then((text) => (clearTimeout(guard), resolve(text)), reject);
    });
    assert.equal(got, "from the writer\n");
  },
);

// A live Deno writer's lock says "k" (it holds the file's flock); the same token with "p" says it
// does not, and is judged by /proc: a live process that does not have the file open holds nothing.
const LIVE_CASES = [["k", false], ["p", false], ["p", true]] as const;
for (const [kind, future] of LIVE_CASES) {
  fileTest(
    `a lock naming a live process that does not hold it ("${kind}") is taken over at once${
      future ? ", whatever its modification time" : ""
    }`,
    async (root) => {
      const dir = `${root}/m`;
      const store = await openFileStore({ dir, readBeforeUpdate: true });
      await store.create("k", "d", "v1");
      const live = await liveLock(root);
      try {
        await Deno.writeTextFile(`${dir}/.k.lock`, live.content.replace(/ [kp]$/, ` ${kind}`));
        if (future) {
          const later = new Date(Date.now() + 365 * 86_400_000);
          await Deno.utime(`${dir}/.k.lock`, later, later);
        }
        const r = await once({ job: "once", dir, key: "k", op: "update", timeoutMs: ANSWER_MS });
        assert.equal(r.ok, true, JSON.stringify(r));
        assert.ok(Number(r.ms) < 1000, `the update answered after ${r.ms} ms`);
        assert.equal((await store.read("k")).content, "updated");
        const d = await once({ job: "once", dir, key: "k", op: "delete", timeoutMs: ANSWER_MS });
        assert.equal(d.deleted, true, JSON.stringify(d));
      } finally {
        await live.stop();
      }
      // Left: the history, the create marks, and this process's own shared lock file (its
      // children's went at their exit).
      assert.deepEqual(leftIn(dir), []);
    },
  );
}
