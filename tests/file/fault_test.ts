// The file backend under faults: directories and files it may not read or write, a directory
// that disappears, a call aborted half-way, and junk that must not count against capacity.
//
// Permission faults need a process the kernel actually refuses. A non-root test runs them in a
// worker as itself. Root bypasses file permissions (CAP_DAC_OVERRIDE), so as root the worker is
// started through `setpriv` with CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH removed from its
// bounding set: it stays uid 0 but the permission bits bind it, and each scenario first checks
// that premise with a raw write or read that must fail. As root without `setpriv`, these tests
// are skipped, and say so.

import assert from "node:assert/strict";
import {
  CapacityError,
  MAX_ENTRIES,
  openFileStore,
  serializeEntry,
  type Store,
  UnavailableError,
} from "../../mod.ts";
import { WorkerGroup, type WorkerRecord } from "./_spawn.ts";
import type { Call } from "./_worker.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { entryTextOf } from "../_lib/memory_file.ts";
import { isBookkeepingName } from "../../backends/file/testing.ts";

const IS_ROOT = Deno.uid() === 0;
const DROP_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"];
const WRAPPER = IS_ROOT ? DROP_DAC : [];

// Whether `setpriv` is there and may drop those capabilities here (it needs CAP_SETPCAP).
function canDropDac(): boolean {
  try {
    return new Deno.Command(DROP_DAC[0]!, {
      args: [...DROP_DAC.slice(1), "true"],
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
  } catch {
    return false;
  }
}

const CAN_BE_REFUSED = !IS_ROOT || canDropDac();
const PERMISSION_TEST = {
  ignore: !CAN_BE_REFUSED,
  sanitizeResources: false,
};
if (!CAN_BE_REFUSED) {
  console.error(
    "%c!!! running as root and setpriv cannot drop CAP_DAC_OVERRIDE: root bypasses file permissions, so the permission fault tests are SKIPPED !!!",
    "color: red; font-weight: bold",
  );
}

// Runs `fn` on a store in `<temp>/store` holding `seed` ([key, description, content] each).
async function withStore(
  seed: [string, string, string][],
  fn: (root: string, dir: string, store: Store) => Promise<void>,
): Promise<void> {
  await using root = await tempDir("agentmem-fault-");
  try {
    const dir = `${root.path}/store`;
    const store = await openFileStore({ dir });
    for (const [key, description, content] of seed) await store.create(key, description, content);
    await fn(root.path, dir, store);
  } finally {
    // Give back every permission taken away, so that the tree can be removed.
    await restorePermissions(root.path);
  }
}

async function restorePermissions(path: string): Promise<void> {
  const st = await Deno.lstat(path);
  if (st.isSymlink) return;
  await Deno.chmod(path, st.isDirectory ? 0o700 : 0o600);
  if (st.isDirectory) {
    for await (const e of Deno.readDir(path)) await restorePermissions(`${path}/${e.name}`);
  }
}

// Runs `ops` in a worker the kernel holds to permission bits; returns one record per call.
async function runRefused(root: string, dir: string, ops: Call[]): Promise<WorkerRecord[]> {
  await using group = new WorkerGroup();
  const w = group.spawn({ mode: "ops", dir, ops }, [root], { wrapper: WRAPPER });
  await group.succeeded();
  const results = w.records.filter((r) => r.t === "op");
  assert.equal(results.length, ops.length, `every call reported; stderr:\n${w.stderr}`);
  return results;
}

function assertRefused(r: WorkerRecord, code: string, root: string, what: string): void {
  assert.equal(r.ok, false, `${what} must fail: ${JSON.stringify(r)}`);
  assert.equal(r.memoryError, true, `${what} fails with a MemoryError: ${JSON.stringify(r)}`);
  assert.equal(r.code, code, `${what}: ${JSON.stringify(r)}`);
  const message = r.message as string;
  assert.ok(!message.includes(root), `${what}: the message holds the path: ${message}`);
  assert.ok(!/(^|[\s"'(=:])\/[^\s"']*\//.test(message), `${what}: a path in: ${message}`);
}

async function contents(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const e of Deno.readDir(dir)) {
    if (isBookkeepingName(e.name)) continue; // the store's own versions and bookkeeping
    out[e.name] = entryTextOf(await Deno.readTextFile(`${dir}/${e.name}`));
  }
  return out;
}

Deno.test({
  name:
    "a read-only directory (chmod 0500): list() and read() work, writes fail with UnavailableError and change nothing",
  ...PERMISSION_TEST,
  fn: () =>
    withStore([["a", "first", "A"], ["b", "second", "B"]], async (root, dir) => {
      // A stale temp file the opening sweep would remove if it could.
      await Deno.writeTextFile(`${dir}/.a.0000000000000000.tmp`, "partial");
      const old = new Date(Date.now() - 3 * 3600_000);
      await Deno.utime(`${dir}/.a.0000000000000000.tmp`, old, old);
      const before = await contents(dir);
      await Deno.chmod(dir, 0o500);

      const r = await runRefused(root, dir, [
        ["raw-write", `${dir}/.premise`],
        ["open", dir],
        ["list"],
        ["read", "a"],
        ["create", "c", "new", "C"],
        ["update", "a", "changed", "A2"],
        ["update", "c", "new", "C"],
        ["delete", "a"],
        ["read", "a"],
      ]);
      assert.equal(r[0]!.ok, false, "premise: the worker must not be able to write here");
      assert.deepEqual(r[1]!.value, { backend: "file", location: "" }, "opening still works");
      assert.deepEqual(r[2]!.value, [
        { key: "a", description: "first" },
        { key: "b", description: "second" },
      ]);
      assert.deepEqual(r[3]!.value, { description: "first", content: "A" });
      assertRefused(r[4]!, "unavailable", root, "create()");
      assertRefused(r[5]!, "unavailable", root, "update() of an existing key");
      assertRefused(r[6]!, "unavailable", root, "update() of a new key");
      assertRefused(r[7]!, "unavailable", root, "delete()");
      assert.deepEqual(r[8]!.value, { description: "first", content: "A" });

      await Deno.chmod(dir, 0o700);
      assert.deepEqual(await contents(dir), before, "the directory is unchanged");
    }),
});

Deno.test({
  name:
    "an unreadable entry (chmod 000): read() fails with UnavailableError, list() shows the others, update() replaces it",
  ...PERMISSION_TEST,
  fn: () =>
    withStore([["a", "first", "A"], ["b", "second", "B"]], async (root, dir) => {
      await Deno.chmod(`${dir}/b.md`, 0o000);

      const r = await runRefused(root, dir, [
        ["read", "b"],
        ["list"],
        ["read", "a"],
        ["create", "b", "again", "B2"],
        ["update", "b", "replaced", "B3"],
        ["read", "b"],
        ["list"],
      ]);
      assertRefused(r[0]!, "unavailable", root, "read() of an unreadable entry");
      assert.equal(r[1]!.ok, true, `list() must not fail: ${JSON.stringify(r[1])}`);
      assert.deepEqual(r[1]!.value, [{ key: "a", description: "first" }]);
      assert.deepEqual(r[2]!.value, { description: "first", content: "A" });
      assertRefused(r[3]!, "exists", root, "create() over an unreadable entry");
      assert.equal(r[4]!.ok, true, `update() replaces it: ${JSON.stringify(r[4])}`);
      assert.deepEqual(r[5]!.value, { description: "replaced", content: "B3" });
      assert.deepEqual(r[6]!.value, [
        { key: "a", description: "first" },
        { key: "b", description: "replaced" },
      ]);
    }),
});

Deno.test({
  name:
    "a directory without permissions (chmod 000): every call fails with a MemoryError naming no path",
  ...PERMISSION_TEST,
  fn: () =>
    withStore([["a", "first", "A"]], async (root, dir) => {
      await Deno.chmod(dir, 0o000);

      const r = await runRefused(root, root, [
        ["raw-write", `${dir}/.premise`],
        ["open", `${dir}/sub`],
        ["open", dir],
      ]);
      assert.equal(r[0]!.ok, false, "premise: the worker must not be able to write here");
      assertRefused(r[1]!, "config", root, "openFileStore() under a locked directory");
      assert.equal(r[2]!.ok, true, `opening does not read the directory: ${JSON.stringify(r[2])}`);

      // The same calls through a store on the locked directory.
      const calls = await runRefused(root, dir, [
        ["list"],
        ["read", "a"],
        ["create", "b", "d", "c"],
        ["update", "a", "d", "c"],
        ["delete", "a"],
      ]);
      for (const [i, what] of ["list()", "read()", "create()", "update()", "delete()"].entries()) {
        assertRefused(calls[i]!, "unavailable", root, what);
      }
      await Deno.chmod(dir, 0o700);
      assert.deepEqual(await contents(dir), { "a.md": "---\ndescription: first\n---\nA" });
    }),
});

Deno.test("a call aborted after it started fails with UnavailableError, writes nothing and leaves no temp file", async () => {
  await withStore([["kept", "kept", "kept"]], async (_root, dir, store) => {
    // The store checks the signal before any I/O and again before it commits. Aborting right
    // after the call returns its promise lands between the two.
    for (
      const call of [
        (signal: AbortSignal) => store.create("new", "d", "c", { signal }),
        (signal: AbortSignal) => store.update("kept", "changed", "changed", { signal }),
        (signal: AbortSignal) => store.update("other", "d", "c", { signal }),
        (signal: AbortSignal) => store.read("kept", { signal }),
      ]
    ) {
      const controller = new AbortController();
      const pending = call(controller.signal);
      controller.abort(new Error("stop"));
      await assert.rejects(pending, UnavailableError);
    }
    assert.deepEqual(await contents(dir), { "kept.md": "---\ndescription: kept\n---\nkept" });
  });
});

Deno.test("a store whose directory is removed fails with UnavailableError and works again once it is back", async () => {
  await withStore([["a", "first", "A"]], async (_root, dir, store) => {
    await Deno.remove(dir, { recursive: true });
    await assert.rejects(store.list(), UnavailableError);
    await assert.rejects(store.create("b", "d", "c"), UnavailableError);
    await assert.rejects(store.update("b", "d", "c"), UnavailableError);
    assert.equal(await store.delete("a"), false);
    await Deno.mkdir(dir);
    await store.create("b", "second", "B");
    assert.deepEqual(await store.list(), [{ key: "b", description: "second" }]);
  });
});

Deno.test("capacity counts only memory files: temp files, odd names, directories and symlinks do not count", async () => {
  await withStore([], async (root, dir) => {
    const store = await openFileStore({ dir, durable: false });
    for (let i = 0; i < 200; i++) {
      await Deno.writeTextFile(`${dir}/.k${i}.0123456789abcdef.tmp`, "partial");
      await Deno.writeTextFile(`${dir}/bad name ${i}.md`, "---\ndescription: x\n---\n");
    }
    for (let i = 0; i < 50; i++) {
      await Deno.mkdir(`${dir}/dir${i}.md`);
      await Deno.symlink(`${root}/nowhere`, `${dir}/link${i}.md`);
    }
    // All but one memory, written straight in the store's format (quicker than creates).
    const filler = serializeEntry("filler", "");
    for (let i = 0; i < MAX_ENTRIES - 1; i++) await Deno.writeTextFile(`${dir}/k${i}.md`, filler);
    await store.create("last", "the last one that fits", "");
    await assert.rejects(store.create("over", "d", "c"), CapacityError);
    assert.equal((await store.list()).length, MAX_ENTRIES);
  });
});
