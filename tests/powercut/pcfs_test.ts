// The power-cut file system's own tests: write through the mount, sync some things and not others,
// cut, and check exactly what survived.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import { assertTools, needs } from "../_lib/needs.ts";
import { spawnChild } from "../_lib/spawn.ts";
import { PowerCutFs, PYTHON } from "./_pcfs.ts";

const NEEDS = needs("the power-cut file system tests", "fuse");
const F = fs.constants;

function test(name: string, fn: (m: string, pc: PowerCutFs) => Promise<void> | void): void {
  Deno.test({ name: `pcfs: ${name}`, ...NEEDS }, async () => {
    assertTools("fuse");
    await using pc = await PowerCutFs.start();
    await fn(pc.mount, pc);
  });
}

/** Writes `text` to a new file (or over an old one), fsyncing it only when `sync` says so. */
function put(path: string, text: string, sync: boolean): void {
  const fd = fs.openSync(path, "w");
  fs.writeSync(fd, text);
  if (sync) fs.fsyncSync(fd);
  fs.closeSync(fd);
}

function syncFile(path: string, data = false): void {
  const fd = fs.openSync(path, "r");
  (data ? fs.fdatasyncSync : fs.fsyncSync)(fd);
  fs.closeSync(fd);
}

function syncDir(path: string): void {
  const fd = fs.openSync(path, F.O_RDONLY | F.O_DIRECTORY);
  fs.fsyncSync(fd);
  fs.closeSync(fd);
}

function read(path: string): string | null {
  try {
    return fs.readFileSync(path, "utf8");
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return null;
    throw e;
  }
}

function names(dir: string): string[] {
  return fs.readdirSync(dir).sort();
}

test("data fsynced but the directory not: the name is gone", async (m, pc) => {
  put(`${m}/a`, "data", true);
  await pc.cut();
  assert.equal(read(`${m}/a`), null);
  assert.deepEqual(names(m), []);
});

test("the directory fsynced but the data not: an empty file", async (m, pc) => {
  put(`${m}/a`, "data", false);
  syncDir(m);
  await pc.cut();
  assert.equal(read(`${m}/a`), "");
});

test("data and directory fsynced (fsync or fdatasync): the file survives whole", async (m, pc) => {
  put(`${m}/a`, "alpha", true);
  put(`${m}/b`, "beta", false);
  syncFile(`${m}/b`, true);
  syncDir(m);
  await pc.cut();
  assert.equal(read(`${m}/a`), "alpha");
  assert.equal(read(`${m}/b`), "beta");
});

test("a rename without a directory fsync: the old name is back", async (m, pc) => {
  put(`${m}/old`, "x", true);
  syncDir(m);
  fs.renameSync(`${m}/old`, `${m}/new`);
  await pc.cut();
  assert.deepEqual(names(m), ["old"]);
  assert.equal(read(`${m}/old`), "x");
});

test("a rename over a name: the old entry until the directory is fsynced", async (m, pc) => {
  put(`${m}/k`, "v1", true);
  syncDir(m);
  put(`${m}/.t1`, "v2", true);
  fs.renameSync(`${m}/.t1`, `${m}/k`);
  await pc.cut();
  assert.deepEqual(names(m), ["k"]);
  assert.equal(read(`${m}/k`), "v1");
  put(`${m}/.t2`, "v3", true);
  fs.renameSync(`${m}/.t2`, `${m}/k`);
  syncDir(m);
  await pc.cut();
  assert.deepEqual(names(m), ["k"]);
  assert.equal(read(`${m}/k`), "v3");
});

test("link and unlink survive only with a directory fsync", async (m, pc) => {
  put(`${m}/t`, "body", true);
  syncDir(m);
  fs.linkSync(`${m}/t`, `${m}/k`);
  await pc.cut();
  assert.deepEqual(names(m), ["t"]);
  fs.linkSync(`${m}/t`, `${m}/k`);
  fs.unlinkSync(`${m}/t`);
  syncDir(m);
  fs.unlinkSync(`${m}/k`);
  await pc.cut();
  assert.deepEqual(names(m), ["k"]);
  assert.equal(read(`${m}/k`), "body");
  assert.equal(fs.statSync(`${m}/k`).nlink, 1);
});

test("writes and truncation of a synced file need its fsync", async (m, pc) => {
  put(`${m}/f`, "0123456789", true);
  syncDir(m);
  const fd = fs.openSync(`${m}/f`, "r+");
  const at = (text: string, pos: number) =>
    fs.writeSync(fd, new TextEncoder().encode(text), 0, text.length, pos);
  at("AB", 0);
  at("Z", 5);
  fs.ftruncateSync(fd, 7);
  assert.equal(read(`${m}/f`), "AB234Z6");
  fs.closeSync(fd);
  await pc.cut();
  assert.equal(read(`${m}/f`), "0123456789");
  const fd2 = fs.openSync(`${m}/f`, "r+");
  fs.ftruncateSync(fd2, 3);
  fs.fsyncSync(fd2);
  fs.closeSync(fd2);
  await pc.cut();
  assert.equal(read(`${m}/f`), "012");
});

test(
  "mkdir and rmdir are the parent's entries; a new directory holds what it synced",
  async (m, pc) => {
    fs.mkdirSync(`${m}/d`);
    put(`${m}/d/f`, "in d", true);
    syncDir(`${m}/d`);
    await pc.cut();
    assert.deepEqual(names(m), []);
    fs.mkdirSync(`${m}/d`);
    put(`${m}/d/f`, "in d", true);
    syncDir(m);
    await pc.cut();
    assert.deepEqual(names(m), ["d"]);
    assert.deepEqual(names(`${m}/d`), []);
    fs.rmdirSync(`${m}/d`);
    await pc.cut();
    assert.deepEqual(names(m), ["d"]);
  },
);

test(
  "a file moved between directories: each side with its own directory's fsync",
  async (m, pc) => {
    fs.mkdirSync(`${m}/a`);
    fs.mkdirSync(`${m}/b`);
    syncDir(m);
    put(`${m}/a/f`, "moving", true);
    syncDir(`${m}/a`);
    fs.renameSync(`${m}/a/f`, `${m}/b/f`);
    syncDir(`${m}/b`);
    await pc.cut();
    // The source was not synced after the move: both names survive (two links to one file).
    assert.equal(read(`${m}/a/f`), "moving");
    assert.equal(read(`${m}/b/f`), "moving");
    assert.equal(fs.statSync(`${m}/b/f`).nlink, 2);
  },
);

test(
  "attributes and symlinks: chmod, utimes, symlink, readlink, lstat, O_NOFOLLOW",
  async (m, pc) => {
    put(`${m}/f`, "x", true);
    fs.chmodSync(`${m}/f`, 0o600);
    fs.utimesSync(`${m}/f`, 1_000_000, 2_000_000);
    fs.symlinkSync("f", `${m}/link`);
    assert.equal(fs.readlinkSync(`${m}/link`), "f");
    assert.ok(fs.lstatSync(`${m}/link`).isSymbolicLink());
    assert.ok(Deno.lstatSync(`${m}/link`).isSymlink);
    assert.throws(
      () => fs.openSync(`${m}/link`, F.O_RDONLY | F.O_NOFOLLOW),
      (e: NodeJS.ErrnoException) => e.code === "ELOOP",
    );
    syncFile(`${m}/f`);
    syncDir(m);
    fs.chmodSync(`${m}/f`, 0o644);
    await pc.cut();
    const st = fs.statSync(`${m}/f`);
    assert.equal(st.mode & 0o777, 0o600);
    assert.equal(st.mtimeMs, 2_000_000_000);
    assert.equal(fs.readlinkSync(`${m}/link`), "f");
    assert.equal(read(`${m}/link`), "x");
    const sfs = fs.statfsSync(m);
    assert.ok(sfs.bsize > 0 && sfs.blocks > 0);
  },
);

test("O_CREAT|O_EXCL refuses a taken name; rename and link refuse what POSIX refuses", (m) => {
  const fd = fs.openSync(`${m}/f`, F.O_WRONLY | F.O_CREAT | F.O_EXCL, 0o600);
  fs.closeSync(fd);
  assert.equal(fs.statSync(`${m}/f`).mode & 0o777, 0o600);
  const code = (fn: () => void) => {
    try {
      fn();
      return "ok";
    } catch (e) {
      return (e as { code?: string }).code;
    }
  };
  assert.equal(code(() => fs.openSync(`${m}/f`, F.O_WRONLY | F.O_CREAT | F.O_EXCL)), "EEXIST");
  assert.equal(code(() => fs.linkSync(`${m}/f`, `${m}/f`)), "EEXIST");
  fs.mkdirSync(`${m}/d`);
  put(`${m}/d/x`, "x", false);
  assert.equal(code(() => fs.rmdirSync(`${m}/d`)), "ENOTEMPTY");
  assert.equal(code(() => fs.renameSync(`${m}/f`, `${m}/d`)), "EISDIR");
  assert.equal(code(() => fs.rmdirSync(`${m}/f`)), "ENOTDIR");
  assert.equal(code(() => fs.readFileSync(`${m}/nothing`)), "ENOENT");
});

test("descriptors opened before a cut fail after it, as after a reboot", async (m, pc) => {
  put(`${m}/f`, "x", true);
  syncDir(m);
  const fd = fs.openSync(`${m}/f`, "r");
  await pc.cut();
  assert.throws(() => fs.readSync(fd, new Uint8Array(1), 0, 1, 0));
  fs.closeSync(fd);
  assert.equal(read(`${m}/f`), "x");
});

test("flock and fcntl locks work across processes (the kernel's emulation)", async (m) => {
  put(`${m}/lock`, "", false);
  const probe = async (call: string) =>
    (await spawnChild(PYTHON, [
      "-c",
      `import fcntl,sys
f=open(sys.argv[1],'r+')
try: fcntl.${call}(f, fcntl.LOCK_EX|fcntl.LOCK_NB)
except OSError: sys.exit(1)`,
      `${m}/lock`,
    ]).finished()).code;
  const file = await Deno.open(`${m}/lock`, { read: true, write: true });
  await file.lock(true);
  assert.equal(await probe("flock"), 1, "a flock held by another process must refuse");
  await file.unlock();
  assert.equal(await probe("flock"), 0);
  file.close();
  // An fcntl lock held by one process refuses another's.
  await using holder = spawnChild(PYTHON, [
    "-c",
    `import fcntl,sys
f=open(sys.argv[1],'r+')
fcntl.lockf(f, fcntl.LOCK_EX)
print('{"t": "held"}', flush=True)
sys.stdin.read()`,
    `${m}/lock`,
  ], { stdin: "piped" });
  await holder.waitFor("held");
  assert.equal(await probe("lockf"), 1, "an fcntl lock held by another process must refuse");
  await holder.closeStdin();
  await holder.finished();
  assert.equal(await probe("lockf"), 0);
});

test(
  "a cut with keep=1 keeps everything; keep=0.5 keeps each file or directory whole or not at all",
  async (m, pc) => {
    put(`${m}/a`, "a", false);
    fs.mkdirSync(`${m}/d`);
    await pc.cut({ keep: 1, seed: 1 });
    assert.deepEqual(names(m), ["a", "d"]);
    assert.equal(read(`${m}/a`), "a");
    for (let i = 0; i < 8; i++) put(`${m}/f${i}`, `new ${i}`, false);
    syncDir(m);
    for (let i = 0; i < 8; i++) put(`${m}/f${i}`, `newer ${i}`, false);
    const stats = await pc.cut({ keep: 0.5, seed: 7 });
    assert.ok((stats.kept_files ?? 0) > 0 && (stats.dropped_files ?? 0) > 0, JSON.stringify(stats));
    for (let i = 0; i < 8; i++) assert.ok(["", `newer ${i}`].includes(read(`${m}/f${i}`) ?? "?"));
  },
);

test("remount keeps everything and counts itself", async (m, pc) => {
  put(`${m}/a`, "kept", false);
  const stats = await pc.remount();
  assert.equal(stats.remounts, 1);
  assert.equal(read(`${m}/a`), "kept");
  const after = await pc.stats();
  assert.equal(after.mounts, 2);
  assert.equal(after.crashes, 0);
});
