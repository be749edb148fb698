// The per-key lock's internals: what inspect() makes of each thing a lock name can hold, how
// holders of every runtime judge each other (Deno holders also hold a kernel lock; Node and Bun
// holders are judged by /proc), that a wait ends when its signal aborts, and that a holder that
// cannot be judged is never broken. Holders and judges run as separate processes from source
// (_lock_holder.ts), on Deno, Node and Bun.

import assert from "node:assert/strict";
import {
  acquire,
  EMPTY_GRACE_MS,
  inspect,
  isSharedLockName,
  lockPath,
  type LockState,
  release,
  selfToken,
} from "../../backends/file/testing.ts";
import { denoEnv, denoRunArgs } from "../_lib/deno_child.ts";
import { spawnChild } from "../_lib/spawn.ts";
import { findRuntime, installHint, RUNTIMES } from "../_lib/runtimes.ts";

const HOLDER = new URL("./_lock_holder.ts", import.meta.url).pathname;
const CI = Deno.env.get("CI") === "true";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const made = await Deno.makeTempDir({ prefix: "agentmem-lock-" });
  try {
    await fn(await Deno.realPath(made));
  } finally {
    await Deno.remove(made, { recursive: true });
  }
}

function test(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, sanitizeOps: false, sanitizeResources: false, fn });
}

test("inspect() calls anything the library did not write foreign, saying what it is", () =>
  withDir(async (dir) => {
    const path = `${dir}/.k.lock`;
    const cases: Array<[string, () => Promise<void> | void, string]> = [
      ["FIFO", () => run("mkfifo", path), "it is a FIFO"],
      ["symlink", () => Deno.symlink("/dev/zero", path), "it is a symbolic link"],
      ["directory", () => Deno.mkdir(path), "it is a directory"],
      ["garbage", () => Deno.writeTextFile(path, "hello"), "it does not hold a lock token"],
      ["too long", () => Deno.writeTextFile(path, "x".repeat(65)), "it holds more than a lock"],
      // A lock as versions before the linked scheme wrote it: a token and a nonce, no kind.
      [
        "old",
        () => Deno.writeTextFile(path, `${selfToken()} 0123456789ab`),
        "it does not hold a lock token",
      ],
    ];
    for (const [what, plant, expected] of cases) {
      await plant();
      assert.deepEqual(inspect(path), { state: "foreign", what: expected }, what);
      await Deno.remove(path);
    }
    assert.deepEqual(inspect(path), { state: "gone" });
  }));

test("inspect() waits on a lock without content while it is young and calls it dead once aged", () =>
  withDir(async (dir) => {
    const path = `${dir}/.k.lock`;
    const at = (ms: number) => new Date(Date.now() + ms);
    const cases: Array<[string, Uint8Array, Date | undefined, LockState["state"]]> = [
      ["empty, new", new Uint8Array(0), undefined, "held"],
      ["NUL bytes, new", new Uint8Array(40), undefined, "held"],
      ["empty, aged", new Uint8Array(0), at(-2 * EMPTY_GRACE_MS), "dead"],
      ["NUL bytes, aged", new Uint8Array(40), at(-2 * EMPTY_GRACE_MS), "dead"],
      ["empty, from the future", new Uint8Array(0), at(2 * EMPTY_GRACE_MS), "dead"],
      ["one byte, aged", new Uint8Array([0x20]), at(-2 * EMPTY_GRACE_MS), "foreign"],
    ];
    for (const [what, bytes, mtime, expected] of cases) {
      await Deno.writeFile(path, bytes);
      if (mtime !== undefined) await Deno.utime(path, mtime, mtime);
      assert.equal(inspect(path).state, expected, what);
      await Deno.remove(path);
    }
  }));

test("a wait for a held lock ends as soon as its signal aborts, and takes nothing", () =>
  withDir(async (dir) => {
    const path = lockPath(dir, "k");
    const held = await acquire(path, { key: "k" });
    try {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 50);
      const started = performance.now();
      await assert.rejects(acquire(path, { key: "k", signal: ac.signal }), /the call was aborted/);
      // Without the abort it would wait LOCK_WAIT_MS (10 s). The bound leaves room for a loaded
      // machine, which can fire the abort's own timer a few hundred ms late.
      const ms = performance.now() - started;
      assert.ok(ms < 50 + 2_000, `the wait ended ${ms - 50} ms after the abort`);
      assert.equal(inspect(path).state, "held");
    } finally {
      release(held);
    }
    // Nothing but this process's shared lock file, closed and ready for its next lock.
    const left = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert.deepEqual(left.filter((n) => !isSharedLockName(n)), []);
  }));

test("a lock whose holder another pid namespace wrote is waited for and never broken", () =>
  withDir(async (dir) => {
    const path = lockPath(dir, "k");
    // A token from a namespace this process cannot see: its pid names nothing here.
    const [pid, start] = selfToken().split("-");
    const content = `${pid}-${start}-ffffffff 0123456789ab p`;
    await Deno.writeTextFile(path, content);
    assert.deepEqual(inspect(path), { state: "unknown", why: "another pid namespace" });
    await assert.rejects(
      acquire(path, { key: "k", signal: AbortSignal.timeout(200) }),
      /the call was aborted/,
    );
    assert.equal(await Deno.readTextFile(path), content);
  }));

test("release() removes only its own lock: a name replaced meanwhile stays", () =>
  withDir(async (dir) => {
    const path = lockPath(dir, "k");
    const held = await acquire(path, { key: "k" });
    await Deno.writeTextFile(`${dir}/other`, "someone else's");
    await Deno.rename(`${dir}/other`, path);
    release(held);
    assert.equal(await Deno.readTextFile(path), "someone else's");
  }));

// --- Holders and judges of every runtime, as separate processes. ---

interface Runner {
  readonly name: string;
  /** The command before the holder's own arguments; `dir` is the only path it may touch. */
  readonly argv: (dir: string) => string[];
  /** Whether it reads /proc (a Deno process given only the store's directory does not). */
  readonly proc: boolean;
  /** Whether it holds and tries kernel locks (Deno). */
  readonly kernel: boolean;
}

const DENO_ARGS = [...denoRunArgs(new URL("../../deno.json", import.meta.url).pathname)];
const RUNNERS: Runner[] = [
  {
    name: "deno",
    argv: () => [Deno.execPath(), ...DENO_ARGS, "--allow-all", HOLDER],
    proc: true,
    kernel: true,
  },
  {
    name: "deno without /proc",
    argv: (dir) => [
      Deno.execPath(),
      ...DENO_ARGS,
      `--allow-read=${dir}`,
      `--allow-write=${dir}`,
      HOLDER,
    ],
    proc: false,
    kernel: true,
  },
];
const missing: string[] = [];
for (const spec of RUNTIMES) {
  const rt = findRuntime(spec);
  if (rt === undefined) missing.push(`${spec.name} (${installHint(spec)})`);
  else RUNNERS.push({ name: spec.name, argv: () => [rt.bin, HOLDER], proc: true, kernel: false });
}
if (missing.length > 0 && !CI) {
  console.error(
    `\n%c!!! lock_test.ts: no ${missing.join(", ")}: their locks are not tested !!!\n`,
    "color: red",
  );
}

/** What `judge` should make of a lock `holder` holds (or held, before it was killed). */
function expected(holder: Runner, judge: Runner, alive: boolean): LockState["state"] {
  if (holder.kernel && judge.kernel) return alive ? "held" : "dead";
  if (!holder.proc || !judge.proc) return "unknown";
  return alive ? "held" : "dead";
}

async function judge(runner: Runner, dir: string, path: string): Promise<string> {
  const [cmd, ...args] = [...runner.argv(dir), "judge", path];
  await using child = spawnChild(cmd!, args, { name: `${runner.name} judge`, env: denoEnv() });
  return JSON.parse((await child.succeeded()).stdout.trim()).state;
}

for (const holder of RUNNERS) {
  test(`a lock held by ${holder.name} is judged by every runtime: held while it lives, dead once it is killed, unknown where it cannot be seen`, () =>
    withDir(async (dir) => {
      if (CI && missing.length > 0) throw new Error(`missing runtimes: ${missing.join(", ")}`);
      const path = lockPath(dir, "k");
      const [cmd, ...args] = [...holder.argv(dir), "hold", path, "k"];
      await using child = spawnChild(cmd!, args, { name: `${holder.name} holder`, env: denoEnv() });
      const locked = await child.next(() => true);
      assert.equal(locked.t, "locked");
      const content = String(locked.content);
      assert.equal(content.endsWith(holder.kernel ? " k" : " p"), true, content);
      for (const alive of [true, false]) {
        if (!alive) {
          child.kill("SIGKILL");
          await child.status;
        }
        const seen: Record<string, string> = {};
        const want: Record<string, string> = {};
        for (const j of RUNNERS) {
          seen[j.name] = await judge(j, dir, path);
          want[j.name] = expected(holder, j, alive);
        }
        assert.deepEqual(seen, want, alive ? "while the holder lives" : "once it is killed");
      }
    }));
}

async function run(cmd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command(cmd, { args }).output();
  assert.ok(out.success, `${cmd} failed`);
}

test("a process's locks in one directory share one file: one inode, a new content for each, open only while one is held", () =>
  withDir(async (dir) => {
    const a = await acquire(lockPath(dir, "a"), { key: "a" });
    const b = await acquire(lockPath(dir, "b"), { key: "b" });
    const shared = [...Deno.readDirSync(dir)].map((e) => e.name).filter(isSharedLockName);
    assert.equal(shared.length, 1, "one shared file");
    const ino = (name: string) => Deno.lstatSync(`${dir}/${name}`).ino;
    assert.equal(ino(".a.lock"), ino(shared[0]!));
    assert.equal(ino(".b.lock"), ino(shared[0]!));
    assert.notEqual(a.content, b.content, "each lock has a content of its own");
    assert.equal(await Deno.readTextFile(`${dir}/.a.lock`), b.content, "the last one written");
    assert.equal(inspect(lockPath(dir, "a")).state, "held");
    release(a);
    assert.equal(inspect(lockPath(dir, "b")).state, "held", "b is still held");
    // A name linked to the shared file for no lock (a release that could not remove it): held
    // while this process holds any lock there, dead once it holds none.
    Deno.linkSync(`${dir}/${shared[0]}`, `${dir}/.z.lock`);
    assert.equal(inspect(lockPath(dir, "z")).state, "held");
    release(b);
    assert.equal(inspect(lockPath(dir, "z")).state, "dead", "no kernel lock once none is held");
    // This process takes such a name back at once; a judge that saw it dead cannot remove the
    // lock taken since: its content changed.
    const before = await Deno.readTextFile(`${dir}/.z.lock`);
    const started = performance.now();
    const z = await acquire(lockPath(dir, "z"), { key: "z" });
    assert.ok(performance.now() - started < 1_000, "taken back without waiting");
    assert.notEqual(z.content, before);
    assert.equal(ino(".z.lock"), ino(shared[0]!), "with the same shared file");
    release(z);
    const left = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert.deepEqual(left, shared, "nothing but the shared file, closed");
  }));

test("a shared lock file removed by hand is replaced: the next lock gets a file that works", () =>
  withDir(async (dir) => {
    release(await acquire(lockPath(dir, "a"), { key: "a" }));
    const [first] = [...Deno.readDirSync(dir)].map((e) => e.name).filter(isSharedLockName);
    await Deno.remove(`${dir}/${first}`);
    const held = await acquire(lockPath(dir, "a"), { key: "a" });
    assert.equal(inspect(lockPath(dir, "a")).state, "held");
    release(held);
    const names = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert.equal(names.length, 1, names.join(", "));
    assert.ok(isSharedLockName(names[0]!) && names[0] !== first, "a new shared file");
    // One swapped for a symlink is never written through, nor followed.
    await Deno.writeTextFile(`${dir}/outside`, "untouched");
    await Deno.remove(`${dir}/${names[0]}`);
    await Deno.symlink(`${dir}/outside`, `${dir}/${names[0]}`);
    release(await acquire(lockPath(dir, "a"), { key: "a" }));
    assert.equal(await Deno.readTextFile(`${dir}/outside`), "untouched");
  }));
