// The file backend's own cases, beyond the shared contract: what it does with hostile directory
// contents (odd names, temp files, directories, symlinks, FIFOs, sockets, devices, corrupt
// files), what its errors may say, how much a listing reads, and how it opens a directory.

import assert from "node:assert/strict";
import { closeSync, constants as FS, openSync, readSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import {
  CapacityError,
  ConfigError,
  CorruptError,
  ExistsError,
  MAX_CONTENT_BYTES,
  MAX_ENTRIES,
  MAX_ENTRY_BYTES,
  MemoryError,
  NotFoundError,
  openFileStore,
  serializeEntry,
} from "../../mod.ts";
import { WorkerGroup } from "./_spawn.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { entryTextOf } from "../_lib/memory_file.ts";
import { isBookkeepingName } from "../../backends/file/testing.ts";

const ENCODER = new TextEncoder();
// The most bytes a valid header can take (store/serialize.ts derives the same bound).
const MAX_HEADER_BYTES = MAX_ENTRY_BYTES - MAX_CONTENT_BYTES;

async function withTempDir(fn: (root: string) => Promise<void>): Promise<void> {
  await using root = await tempDir("agentmem-file-");
  await fn(root.path);
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  return await p.then(
    (v) => assert.fail(`expected a failure, got ${JSON.stringify(v)}`),
    (e) => e,
  );
}

// The names in a directory, without the store's own history directory.
async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) if (!isBookkeepingName(e.name)) out.push(e.name);
  return out.sort();
}

async function mkfifo(path: string): Promise<void> {
  const { success, stderr } = await new Deno.Command("mkfifo", { args: [path], stderr: "piped" })
    .output();
  assert.ok(success, new TextDecoder().decode(stderr));
}

// A character device (/dev/null's numbers), when this process may make one (root may).
async function tryMknod(path: string): Promise<boolean> {
  try {
    const { success } = await new Deno.Command("mknod", {
      args: [path, "c", "1", "3"],
      stderr: "null",
    }).output();
    return success;
  } catch {
    return false;
  }
}

/** What a file outside the store looks like: its bytes and its times. */
interface Snapshot {
  readonly bytes: string;
  readonly mtime: number | undefined;
  readonly atime: number | undefined;
}

// Reading the bytes moves the access time, so it is put back afterwards.
async function snapshot(path: string): Promise<Snapshot> {
  const st = await Deno.lstat(path);
  const bytes = await Deno.readTextFile(path);
  if (st.atime !== null && st.mtime !== null) await Deno.utime(path, st.atime, st.mtime);
  return { bytes, mtime: st.mtime?.getTime(), atime: st.atime?.getTime() };
}

// An old access time, so that any read() of the file would move it (relatime updates an atime
// older than a day).
const OLD_ATIME = new Date("2001-02-03T04:05:06Z");

function messageProblems(e: unknown, root: string): string[] {
  const problems: string[] = [];
  if (!(e instanceof MemoryError)) return [`not a MemoryError: ${e}`];
  for (const text of [e.message, String(e)]) {
    if (text.includes(root)) problems.push(`holds the temp dir: ${text}`);
    if (/(^|[\s"'(=:])\/[^\s"']*\//.test(text)) problems.push(`holds an absolute path: ${text}`);
  }
  return problems;
}

Deno.test("list() shows only regular files named <legal key>.md", async () => {
  await withTempDir(async (root) => {
    const dir = `${root}/store`;
    const store = await openFileStore({ dir });
    await store.create("a", "first", "A");
    await store.create("b", "second", "B");
    const valid = serializeEntry("planted", "planted body");
    const outside = `${root}/outside.md`;
    await Deno.writeTextFile(outside, valid);
    for (
      const name of [
        "bad name.md",
        ".hidden.md",
        ".a.0123456789abcdef.tmp",
        ".md",
        "x..y.md",
        "trailing..md",
        "\u00e9t\u00e9.md",
        `${"k".repeat(201)}.md`,
        "plain.txt",
        "noext",
        "c.MD",
        "d.md.bak",
      ]
    ) {
      await Deno.writeTextFile(`${dir}/${name}`, valid);
    }
    await Deno.mkdir(`${dir}/sub.md`);
    await Deno.writeTextFile(`${dir}/sub.md/inner.md`, valid);
    await Deno.symlink(`${dir}/a.md`, `${dir}/inside.md`);
    await Deno.symlink("a.md", `${dir}/relative.md`);
    await Deno.symlink(outside, `${dir}/outside.md`);
    await Deno.symlink(`${root}/nowhere.md`, `${dir}/dangling.md`);
    await Deno.symlink(`${dir}/loop.md`, `${dir}/loop.md`);
    await Deno.symlink(root, `${dir}/dirlink.md`);
    await mkfifo(`${dir}/x.md`);
    const socket = Deno.listen({ transport: "unix", path: `${dir}/sock.md` });
    try {
      await tryMknod(`${dir}/dev.md`);
      assert.deepEqual(await store.list(), [
        { key: "a", description: "first" },
        { key: "b", description: "second" },
      ]);
      assert.deepEqual(await (await openFileStore({ dir })).list(), await store.list());
    } finally {
      socket.close();
    }
  });
});

// Names under a legal key that are not memory files, and the file outside the store one of them
// points at.
async function plantForeign(root: string, dir: string): Promise<Map<string, string>> {
  const kinds = new Map<string, string>();
  await Deno.writeTextFile(`${root}/outside.md`, serializeEntry("outside", "never to be read"));
  await Deno.utime(`${root}/outside.md`, OLD_ATIME, new Date("2002-01-01T00:00:00Z"));
  await Deno.mkdir(`${root}/outdir`);
  await Deno.symlink(`${root}/outside.md`, `${dir}/out.md`);
  kinds.set("out", "symlink to a file outside");
  await Deno.symlink(`${dir}/real.md`, `${dir}/in.md`);
  kinds.set("in", "symlink to an entry inside");
  await Deno.symlink(`${root}/outdir`, `${dir}/outdir.md`);
  kinds.set("outdir", "symlink to a directory outside");
  await Deno.symlink(`${root}/missing.md`, `${dir}/dangling.md`);
  kinds.set("dangling", "dangling symlink");
  await Deno.mkdir(`${dir}/sub.md`);
  await Deno.writeTextFile(`${dir}/sub.md/keep`, "kept");
  kinds.set("sub", "directory");
  await mkfifo(`${dir}/x.md`);
  kinds.set("x", "FIFO");
  if (await tryMknod(`${dir}/dev.md`)) kinds.set("dev", "character device");
  return kinds;
}

interface NodeState {
  readonly type: string;
  readonly target: string | undefined;
  readonly mtime: number | undefined;
}

async function nodeState(path: string): Promise<NodeState> {
  const st = await Deno.lstat(path);
  const type = st.isSymlink
    ? "symlink"
    : st.isDirectory
    ? "dir"
    : st.isFile
    ? "file"
    : st.isFifo
    ? "fifo"
    : st.isSocket
    ? "socket"
    : "other";
  return {
    type,
    target: st.isSymlink ? await Deno.readLink(path) : undefined,
    mtime: st.mtime?.getTime(),
  };
}

Deno.test("read() of a symlink, directory, FIFO, socket or device name fails with NotFoundError and follows nothing", async () => {
  await withTempDir(async (root) => {
    const dir = `${root}/store`;
    const store = await openFileStore({ dir });
    await store.create("real", "the real one", "real body");
    const kinds = await plantForeign(root, dir);
    const socket = Deno.listen({ transport: "unix", path: `${dir}/sock.md` });
    kinds.set("sock", "socket");
    try {
      const before = await snapshot(`${root}/outside.md`);
      for (const [key, kind] of kinds) {
        const err = await failure(store.read(key));
        assert.ok(err instanceof NotFoundError, `read() of a ${kind}: ${err}`);
        assert.equal(err.key, key);
      }
      assert.deepEqual(await store.read("real"), {
        description: "the real one",
        content: "real body",
      });
      const after = await snapshot(`${root}/outside.md`);
      assert.equal(after.bytes, before.bytes);
      assert.equal(after.mtime, before.mtime);
      // The outside file's access time did not move, so nothing read it. The control read below
      // shows this file system does record reads (no "noatime"); without that, say so.
      assert.equal(after.atime, before.atime, "the file outside the store was read");
      const control = await open(`${root}/outside.md`, FS.O_RDONLY);
      await control.read(new Uint8Array(16), 0, 16, 0);
      await control.close();
      const controlled = await snapshot(`${root}/outside.md`);
      if (controlled.atime === before.atime) {
        console.warn("this file system does not record access times: the no-read check is weak");
      }
    } finally {
      socket.close();
    }
  });
});

Deno.test("read() of a FIFO neither hangs nor reads it, even with a valid entry waiting in it", async () => {
  await withTempDir(async (root) => {
    const dir = `${root}/store`;
    const store = await openFileStore({ dir });
    const fifo = `${dir}/pipe.md`;
    await mkfifo(fifo);
    // Held open for reading and writing (which never blocks), with a whole entry in the pipe: a
    // store that read the FIFO would find it and show it as a memory.
    const fd = openSync(fifo, FS.O_RDWR | FS.O_NONBLOCK);
    try {
      writeSync(fd, ENCODER.encode(serializeEntry("from the pipe", "never a memory")));
      for (let i = 0; i < 3; i++) {
        assert.ok(await failure(store.read("pipe")) instanceof NotFoundError);
      }
      assert.ok((await failure(store.create("pipe", "d", "c"))) instanceof MemoryError);
      assert.ok((await failure(store.update("pipe", "d", "c"))) instanceof MemoryError);
      assert.equal(await store.delete("pipe"), false);
      assert.deepEqual(await store.list(), []);
      // Every byte is still in the pipe: nothing read any of them.
      const buf = new Uint8Array(4096);
      const got = new TextDecoder().decode(buf.subarray(0, readSync(fd, buf)));
      assert.equal(got, serializeEntry("from the pipe", "never a memory"));
    } finally {
      closeSync(fd);
    }
  });
});

Deno.test("create(), update() and delete() leave a symlink, directory, FIFO or device under a key alone", async () => {
  await withTempDir(async (root) => {
    const dir = `${root}/store`;
    const store = await openFileStore({ dir });
    await store.create("real", "the real one", "real body");
    const kinds = await plantForeign(root, dir);
    const socket = Deno.listen({ transport: "unix", path: `${dir}/sock.md` });
    kinds.set("sock", "socket");
    try {
      const outside = await snapshot(`${root}/outside.md`);
      const states = new Map<string, NodeState>();
      for (const key of kinds.keys()) states.set(key, await nodeState(`${dir}/${key}.md`));
      const namesBefore = await names(dir);
      for (const [key, kind] of kinds) {
        const created = await failure(store.create(key, "planted", "over a foreign name"));
        assert.ok(created instanceof MemoryError, `create() over a ${kind}: ${created}`);
        assert.ok(!(created instanceof ExistsError), `create() over a ${kind} is no ExistsError`);
        const updated = await failure(store.update(key, "planted", "over a foreign name"));
        assert.ok(updated instanceof MemoryError, `update() over a ${kind}: ${updated}`);
        assert.equal(await store.delete(key), false, `delete() of a ${kind}`);
        assert.deepEqual(await nodeState(`${dir}/${key}.md`), states.get(key), kind);
        for (const e of [created, updated]) assert.deepEqual(messageProblems(e, root), []);
      }
      assert.deepEqual(await names(dir), namesBefore, "no temp file or new name is left behind");
      assert.deepEqual(await names(`${dir}/sub.md`), ["keep"]);
      assert.deepEqual(await names(`${root}/outdir`), []);
      assert.equal(
        entryTextOf(await Deno.readTextFile(`${dir}/real.md`)),
        serializeEntry("the real one", "real body"),
      );
      const after = await snapshot(`${root}/outside.md`);
      assert.deepEqual(after, outside, "the file outside the store was read or changed");
      await assert.rejects(Deno.lstat(`${root}/missing.md`), Deno.errors.NotFound);
    } finally {
      socket.close();
    }
  });
});

// Corrupt files, each under its own key. `header` says whether its header is still valid (a
// listing, which reads only headers, may then show it).
const CORRUPT: Array<{ key: string; bytes: Uint8Array; header: boolean }> = [
  { key: "garbage", bytes: crypto.getRandomValues(new Uint8Array(3000)), header: false },
  { key: "empty", bytes: new Uint8Array(0), header: false },
  { key: "text", bytes: ENCODER.encode("just some text\nno header\n"), header: false },
  {
    key: "utf8-header",
    bytes: new Uint8Array([
      ...ENCODER.encode('---\ndescription: "bad '),
      0xff,
      0xfe,
      ...ENCODER.encode('"\n---\nbody'),
    ]),
    header: false,
  },
  {
    key: "utf8-body",
    bytes: new Uint8Array([...ENCODER.encode("---\ndescription: fine\n---\nbad "), 0xc3, 0x28]),
    header: true,
  },
  {
    key: "unclosed",
    bytes: ENCODER.encode("---\ndescription: never closed\nbody\n"),
    header: false,
  },
  {
    key: "huge-header",
    bytes: ENCODER.encode(`---\ndescription: ${"d".repeat(MAX_HEADER_BYTES + 1)}\n---\nbody`),
    header: false,
  },
  {
    key: "oversize",
    bytes: ENCODER.encode(`---\ndescription: fine\n---\n${"x".repeat(MAX_ENTRY_BYTES)}`),
    header: true,
  },
  {
    key: "body-too-large",
    bytes: ENCODER.encode(`---\ndescription: fine\n---\n${"x".repeat(MAX_CONTENT_BYTES + 1)}`),
    header: true,
  },
  { key: "no-description", bytes: ENCODER.encode("---\ntitle: x\n---\nbody"), header: false },
  {
    key: "list-description",
    bytes: ENCODER.encode("---\ndescription: [1, 2]\n---\nbody"),
    header: false,
  },
  {
    key: "bad-yaml",
    bytes: ENCODER.encode('---\ndescription: "unterminated\n---\nbody'),
    header: false,
  },
  {
    key: "control",
    bytes: ENCODER.encode('---\ndescription: "bell \\a"\n---\nbody'),
    header: false,
  },
  {
    key: "alias",
    bytes: ENCODER.encode("---\nx: &a v\ndescription: *a\n---\nbody"),
    header: false,
  },
  { key: "bom", bytes: ENCODER.encode("\uFEFF---\ndescription: x\n---\nbody"), header: false },
];

Deno.test("a corrupt file fails read() with CorruptError and does not stop list()", async () => {
  await withTempDir(async (root) => {
    const dir = `${root}/store`;
    const store = await openFileStore({ dir });
    await store.create("good-1", "first good", "1");
    await store.create("good-2", "second good", "2");
    for (const { key, bytes } of CORRUPT) await Deno.writeFile(`${dir}/${key}.md`, bytes);

    for (const { key } of CORRUPT) {
      const err = await failure(store.read(key));
      assert.ok(err instanceof CorruptError, `read("${key}"): ${err}`);
      assert.equal(err.code, "corrupt");
      assert.equal(err.key, key);
      assert.deepEqual(messageProblems(err, root), []);
    }
    const listed = (await store.list()).map((i) => i.key);
    for (const key of ["good-1", "good-2"]) assert.ok(listed.includes(key), `${key} is listed`);
    for (const { key, header } of CORRUPT) {
      if (!header) assert.ok(!listed.includes(key), `${key}, whose header is corrupt, is listed`);
    }
    assert.ok(listed.every((k) => k.startsWith("good-") || CORRUPT.some((c) => c.key === k)));

    // A corrupt entry is still an entry: it can be replaced or deleted, not created over.
    await assert.rejects(store.create("garbage", "d", "c"), ExistsError);
    await store.update("garbage", "repaired", "fixed");
    assert.deepEqual(await store.read("garbage"), { description: "repaired", content: "fixed" });
    assert.equal(await store.delete("unclosed"), true);
    await assert.rejects(store.read("unclosed"), NotFoundError);
  });
});

Deno.test("no error message holds the directory's path or any absolute path; info().location is empty", async () => {
  await withTempDir(async (root) => {
    const errors: Array<[string, unknown]> = [];
    const collect = async (what: string, p: Promise<unknown>) => {
      errors.push([what, await failure(p)]);
    };
    await Deno.writeTextFile(`${root}/file`, "a regular file");
    await collect("open a regular file", openFileStore({ dir: `${root}/file` }));
    await collect("open under a regular file", openFileStore({ dir: `${root}/file/sub` }));
    await collect("open a too-long name", openFileStore({ dir: `${root}/${"n".repeat(300)}` }));
    await Deno.symlink(`${root}/loop`, `${root}/loop`);
    await collect("open a symlink loop", openFileStore({ dir: `${root}/loop/sub` }));

    const dir = `${root}/store`;
    const store = await openFileStore({ dir });
    assert.deepEqual(store.info(), { backend: "file", location: "" });
    await store.create("exists", "d", "c");
    await collect("create an existing key", store.create("exists", "d", "c"));
    await collect("read a missing key", store.read("missing"));
    await Deno.writeTextFile(`${dir}/corrupt.md`, "not an entry");
    await collect("read a corrupt entry", store.read("corrupt"));
    await Deno.symlink(`${root}/file`, `${dir}/link.md`);
    await collect("create over a symlink", store.create("link", "d", "c"));
    await collect("update over a symlink", store.update("link", "d", "c"));
    await Deno.mkdir(`${dir}/sub.md`);
    await collect("create over a directory", store.create("sub", "d", "c"));
    await collect("update over a directory", store.update("sub", "d", "c"));

    // The directory disappears, then a regular file takes its place.
    await Deno.remove(dir, { recursive: true });
    await collect("list a removed directory", store.list());
    await collect("read from a removed directory", store.read("exists"));
    await collect("create in a removed directory", store.create("x", "d", "c"));
    await collect("update in a removed directory", store.update("x", "d", "c"));
    await Deno.writeTextFile(dir, "not a directory");
    await collect("list a file", store.list());
    await collect("create in a file", store.create("x", "d", "c"));
    await collect("update in a file", store.update("x", "d", "c"));
    await collect("delete in a file", store.delete("x"));
    assert.deepEqual(store.info(), { backend: "file", location: "" });

    for (const [what, e] of errors) assert.deepEqual(messageProblems(e, root), [], what);
    const configErrors = errors.filter(([what]) => what.startsWith("open"));
    for (const [what, e] of configErrors) assert.ok(e instanceof ConfigError, `${what}: ${e}`);
  });
});

// The byte counter is Linux's /proc/<pid>/io; elsewhere the test is skipped, and says so.
const HAS_PROC_IO = (() => {
  try {
    return Deno.statSync("/proc/self/io").isFile;
  } catch {
    return false;
  }
})();
if (!HAS_PROC_IO) console.error("!!! no /proc/self/io: SKIPPING the list() bytes-read test !!!");

Deno.test({
  name: "list() reads only headers: a separate process reads far less than the bodies",
  ignore: !HAS_PROC_IO,
}, async () => {
  await withTempDir(async (root) => {
    const dir = `${root}/store`;
    await openFileStore({ dir });
    await fill(dir, MAX_ENTRIES, "b".repeat(MAX_CONTENT_BYTES));
    const bodies = MAX_ENTRIES * MAX_CONTENT_BYTES; // 64 MiB
    const ctl = `${root}/ctl`;
    await Deno.mkdir(ctl);
    {
      await using group = new WorkerGroup();
      const w = group.spawn({ mode: "list-io", dir, ctl }, [root]);
      // The kernel's count of bytes the worker has read through read(2) and its kin.
      const rchar = async () => {
        const io = await Deno.readTextFile(`/proc/${w.pid}/io`);
        return Number(/^rchar:\s*(\d+)$/m.exec(io)?.[1] ?? NaN);
      };
      await group.ready();
      const atReady = await rchar();
      await Deno.writeTextFile(`${ctl}/list`, "");
      assert.equal((await w.waitFor((r) => r.t === "listed")).count, MAX_ENTRIES);
      const listed = await rchar();
      await Deno.writeTextFile(`${ctl}/read`, "");
      assert.equal((await w.waitFor((r) => r.t === "read-all")).contentChars, bodies);
      const readAll = await rchar();
      await Deno.writeTextFile(`${ctl}/exit`, "");
      await group.succeeded();

      const listBytes = listed - atReady;
      const readBytes = readAll - listed;
      // The counter counts file reads: reading every body costs at least the bodies' size.
      assert.ok(readBytes >= bodies, `reading all bodies read ${readBytes} bytes`);
      assert.ok(
        listBytes < bodies / 16,
        `list() read ${listBytes} bytes, the bodies hold ${bodies}`,
      );
      console.log(`list() read ${listBytes} bytes; reading every entry read ${readBytes} bytes`);
    }
  });
});

Deno.test("openFileStore() creates a missing directory (mode 0700) and refuses a regular file", async () => {
  await withTempDir(async (root) => {
    const dir = `${root}/a/b/c`;
    const store = await openFileStore({ dir });
    const st = await Deno.stat(dir);
    assert.ok(st.isDirectory);
    assert.equal((st.mode ?? 0) & 0o777, 0o700);
    await store.create("k", "d", "c");
    assert.deepEqual(await (await openFileStore({ dir })).read("k"), {
      description: "d",
      content: "c",
    });

    await Deno.writeTextFile(`${root}/plain`, "keep me");
    const err = await failure(openFileStore({ dir: `${root}/plain` }));
    assert.ok(err instanceof ConfigError, String(err));
    assert.equal(await Deno.readTextFile(`${root}/plain`), "keep me");
    await assert.rejects(openFileStore({ dir: "" }), ConfigError);
  });
});

Deno.test("openFileStore() sweeps temp files older than an hour and keeps fresh ones and everything else", async () => {
  await withTempDir(async (root) => {
    const dir = `${root}/store`;
    const store = await openFileStore({ dir });
    await store.create("old", "an old entry", "still wanted");
    const hoursAgo = (h: number) => new Date(Date.now() - h * 3600_000);
    const plant = async (name: string, age: number) => {
      await Deno.writeTextFile(`${dir}/${name}`, "partial");
      await Deno.utime(`${dir}/${name}`, hoursAgo(age), hoursAgo(age));
    };
    await plant(".k.00112233aabbccdd.tmp", 2);
    await plant(".k.8899aabbccddeeff.tmp", 1.1);
    await plant(".k.0123456789abcdef.tmp", 0.5);
    await plant(".k.fedcba9876543210.tmp", 0);
    await plant(".notes", 5);
    await plant("notes.tmp", 5);
    await Deno.utime(`${dir}/old.md`, hoursAgo(48), hoursAgo(48));
    await Deno.mkdir(`${dir}/.d.tmp`);
    await Deno.utime(`${dir}/.d.tmp`, hoursAgo(3), hoursAgo(3));
    await Deno.writeTextFile(`${root}/outside`, "outside");
    await Deno.utime(`${root}/outside`, hoursAgo(3), hoursAgo(3));
    await Deno.symlink(`${root}/outside`, `${dir}/.s.tmp`);

    const reopened = await openFileStore({ dir });
    assert.deepEqual(await names(dir), [
      ".d.tmp",
      ".k.0123456789abcdef.tmp",
      ".k.fedcba9876543210.tmp",
      ".notes",
      ".s.tmp",
      "notes.tmp",
      "old.md",
    ]);
    assert.equal(await Deno.readTextFile(`${root}/outside`), "outside");
    assert.deepEqual(await reopened.list(), [{ key: "old", description: "an old entry" }]);
  });
});

// Writes `count` valid entries k0, k1, ... straight into `dir`, in the store's own format:
// quicker than `count` creates, each of which lists the directory to check capacity.
async function fill(dir: string, count: number, content = ""): Promise<void> {
  const text = serializeEntry("filler", content);
  for (let i = 0; i < count; i += 64) {
    await Promise.all(
      Array.from(
        { length: Math.min(64, count - i) },
        (_, j) => Deno.writeTextFile(`${dir}/k${i + j}.md`, text),
      ),
    );
  }
}

Deno.test("update() of a missing key creates it and counts against capacity", async () => {
  await withTempDir(async (root) => {
    const dir = `${root}/store`;
    let store = await openFileStore({ dir, durable: false });
    await store.update("made-by-update", "created", "by update");
    assert.deepEqual(await store.read("made-by-update"), {
      description: "created",
      content: "by update",
    });
    await store.delete("made-by-update");
    await fill(dir, MAX_ENTRIES);
    // Another process filled the directory; a store that has not counted it yet (a fresh one,
    // or this one after a second) sees it. A second must not pass here: open a fresh store.
    store = await openFileStore({ dir, durable: false });
    const err = await failure(store.update("one-more", "d", "c"));
    assert.ok(err instanceof CapacityError, String(err));
    assert.equal(err.key, "one-more");
    await assert.rejects(store.read("one-more"), NotFoundError);
    assert.equal((await names(dir)).length, MAX_ENTRIES, "nothing was written, not even a temp");
    // An overwrite of an existing key still works at capacity, and a freed slot can be taken.
    await store.update("k0", "replaced", "at capacity");
    assert.equal((await store.read("k0")).content, "at capacity");
    assert.equal(await store.delete("k1"), true);
    await store.update("one-more", "d", "c");
    assert.equal((await store.list()).length, MAX_ENTRIES);
  });
});
