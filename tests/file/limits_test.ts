// The file backend's limits and invariants as users deploy it: several handles and processes on
// one directory, any umask, writers killed mid-write, read-only access, hostile configuration.

import assert from "node:assert/strict";
import {
  CapacityError,
  ConfigError,
  CorruptError,
  decodeOptions,
  MAX_ENTRIES,
  openFileStore,
  openStore,
  registerBackend,
  type Store,
} from "../../mod.ts";
import { lockHolder, rbuWorker } from "./_rbu_spawn.ts";
import { fileTest, leftIn } from "./_fixture.ts";
import { isSharedLockName } from "../../backends/file/testing.ts";
import { denoEnv, TEST_CONFIG } from "../_lib/deno_child.ts";
import { spawnChild } from "../_lib/spawn.ts";

function entries(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".md")).sort();
}

fileTest(
  `capacity: two handles creating strictly in turn never pass ${MAX_ENTRIES} entries`,
  async (dir) => {
    const stores = [await openFileStore({ dir }), await openFileStore({ dir })];
    // Fast writes: the rule is about counting, not flushing.
    const fast = [
      await openFileStore({ dir, durable: false }),
      await openFileStore({ dir, durable: false }),
    ];
    let created = 0;
    let refused = 0;
    for (let i = 0; i < MAX_ENTRIES + 40; i++) {
      const store = (i < MAX_ENTRIES - 8 ? fast : stores)[i % 2] as Store;
      try {
        await store.create(`k${i}`, "filler", "");
        created++;
      } catch (e) {
        assert.ok(e instanceof CapacityError, String(e));
        refused++;
      }
    }
    assert.equal(created, MAX_ENTRIES);
    assert.equal(refused, 40);
    assert.equal(entries(dir).length, MAX_ENTRIES);
  },
);

fileTest(
  "capacity: 40 creates in flight through one handle at 1,000 entries fill it exactly",
  async (dir) => {
    const fill = await openFileStore({ dir, durable: false });
    for (let i = 0; i < 1000; i++) await fill.create(`f${i}`, "filler", "");
    const store = await openFileStore({ dir });
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => store.create(`n${i}`, "new", "body")),
    );
    const ok = results.filter((r) => r.status === "fulfilled").length;
    for (const r of results) {
      if (r.status === "rejected") assert.ok(r.reason instanceof CapacityError, String(r.reason));
    }
    assert.equal(ok, MAX_ENTRIES - 1000);
    assert.equal(entries(dir).length, MAX_ENTRIES);
  },
);

fileTest(
  "capacity: 4 processes racing from an empty store end with 1,024 to 1,028 entries",
  async (dir) => {
    const go = `${dir}.go`;
    const workers = Array.from(
      { length: 4 },
      (_, i) => rbuWorker({ job: "capacity", dir, prefix: `p${i}`, go, refusals: 5 }),
    );
    try {
      for (const w of workers) await w.waitFor("ready");
      await Deno.writeTextFile(go, "");
      await Promise.all(workers.map((w) => w.succeeded()));
    } finally {
      for (const w of workers) await w[Symbol.asyncDispose]();
      await Deno.remove(go).catch(() => {});
    }
    const n = entries(dir).length;
    assert.ok(n >= MAX_ENTRIES && n <= MAX_ENTRIES + 4, `${n} entries`);
    const created = workers.map((w) => Number(w.records.find((r) => r.t === "done")?.created));
    assert.equal(created.reduce((a, b) => a + b, 0), n, `every acknowledged create is there`);
    assert.ok(created.filter((c) => c > 0).length >= 2, `the processes raced: ${created}`);
  },
);

fileTest(
  "files: entries and temp files are 0600 and a created directory 0700, whatever the umask",
  async (root) => {
    // Another process, so the umask of this one (shared by parallel tests) is left alone.
    const script = `
      import process from "node:process";
      import { openFileStore } from ${
      JSON.stringify(new URL("../../mod.ts", import.meta.url).href)
    };
      process.umask(0o022);
      const shared = await openFileStore({ dir: ${JSON.stringify(`${root}/operator`)} });
      await shared.create("a", "d", "c");
      await shared.update("a", "d", "c2");
      process.umask(0o277);
      const own = await openFileStore({ dir: ${JSON.stringify(`${root}/made/deep`)} });
      await own.create("b", "d", "c");
    `;
    await Deno.mkdir(`${root}/operator`, { mode: 0o755 });
    await Deno.chmod(`${root}/operator`, 0o755);
    const out = await spawnChild(Deno.execPath(), [
      "eval",
      "--config",
      TEST_CONFIG,
      "--cached-only",
      script,
    ], { name: "deno eval (umask)", env: denoEnv() }).finished();
    assert.ok(out.success, out.stderr);
    const mode = (p: string) => Deno.statSync(p).mode! & 0o777;
    assert.equal(mode(`${root}/operator/a.md`), 0o600);
    assert.equal(mode(`${root}/operator`), 0o755, "an operator's directory keeps its mode");
    assert.equal(mode(`${root}/made/deep`), 0o700);
    assert.equal(mode(`${root}/made/deep/b.md`), 0o600);
  },
);

fileTest(
  "files: a dead writer's temp file is swept at open; a live writer's is never, however old",
  async (dir) => {
    let dead: string;
    {
      await using w = lockHolder();
      dead = String((await w.waitFor("token")).token);
      await w.succeeded();
    }
    await using live = lockHolder(dir, "held");
    const alive = String((await live.waitFor("locked")).token);
    const old = new Date(Date.now() - 3 * 3600_000);
    const plant = (name: string, mtime?: Date) => {
      Deno.writeTextFileSync(`${dir}/${name}`, "---\ndescription: x\n---\nsecret body");
      if (mtime) Deno.utimeSync(`${dir}/${name}`, mtime, mtime);
    };
    plant(`.k.${dead}.0123456789abcdef.tmp`); // fresh, but its writer is dead
    plant(`.k.${alive}.0123456789abcdef.tmp`, old); // old, but its writer lives (paused, say)
    plant(`.k.1-0-00000000.0123456789abcdef.tmp`, old); // liveness unknowable, hours old
    plant(`.k.1-0-00000000.fedcba9876543210.tmp`); // liveness unknowable, fresh
    plant(`.k.0123456789abcdef.tmp`, old); // an older version's name, hours old
    await openFileStore({ dir });
    const left = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    // The live holder's lock is linked to its shared lock file, which stays while it lives.
    const shared = left.filter(isSharedLockName);
    assert.ok(shared.every((n) => n.includes(`.${alive}.`)), shared.join(", "));
    assert.deepEqual(
      left.filter((n) => !isSharedLockName(n)),
      [
        `.held.lock`,
        `.k.${alive}.0123456789abcdef.tmp`,
        `.k.1-0-00000000.fedcba9876543210.tmp`,
      ].sort(),
    );
    // Once the holder is killed, its lock, its shared lock file and its temp file go at the next
    // sweep (list() sweeps).
    live.kill();
    await live[Symbol.asyncDispose]();
    const store = await openFileStore({ dir });
    await store.list();
    assert.deepEqual(leftIn(dir), [`.k.1-0-00000000.fedcba9876543210.tmp`]);
  },
);

fileTest(
  "read-only: opens and lists with read permission only, never creates or writes",
  async (root) => {
    const dir = `${root}/mem`;
    const store = await openFileStore({ dir });
    await store.create("note", "a note", "body");
    const before = entries(dir);
    {
      await using w = rbuWorker({ job: "readonly", dir }, [`--allow-read=${root}`]);
      assert.deepEqual((await w.waitFor("listed")).count, 1);
      assert.deepEqual((await w.waitFor("listed")).first, {
        description: "a note",
        content: "body",
      });
      assert.equal((await w.waitFor("write")).code, "read_only");
      await w.succeeded();
    }
    assert.deepEqual(entries(dir), before);
    // A missing directory is a ConfigError and is not created.
    {
      await using w = rbuWorker({ job: "readonly", dir: `${root}/typo` }, [
        `--allow-read=${root}`,
        `--allow-write=${root}`,
      ]);
      assert.equal((await w.waitFor("error")).code, "config");
      await w.succeeded();
    }
    await assert.rejects(Deno.lstat(`${root}/typo`), Deno.errors.NotFound);
    await assert.rejects(openFileStore({ dir: `${root}/typo`, readOnly: true }), ConfigError);
    await assert.rejects(Deno.lstat(`${root}/typo`), Deno.errors.NotFound);
  },
);

fileTest(
  "list() shows an entry whose header parses but whose body does not; read() reports it corrupt",
  async (dir) => {
    const store = await openFileStore({ dir });
    const bad = new Uint8Array([
      ...new TextEncoder().encode("---\ndescription: damaged body\n---\n"),
      0xff,
      0xfe,
    ]);
    await Deno.writeFile(`${dir}/bad.md`, bad);
    assert.deepEqual(await store.list(), [{ key: "bad", description: "damaged body" }]);
    await assert.rejects(store.read("bad"), CorruptError);
  },
);

Deno.test("errors: options and definitions that throw when read are ConfigErrors", async () => {
  const schema = { dir: { type: "string", required: true } } as const;
  const getter = Object.defineProperty({}, "dir", {
    enumerable: true,
    get() {
      throw new Error("boom /secret/path");
    },
  });
  const trap = new Proxy({}, {
    ownKeys() {
      throw new TypeError("trap");
    },
  });
  const { proxy: revoked, revoke } = Proxy.revocable({}, {});
  revoke();
  for (const raw of [getter, trap, revoked]) {
    assert.throws(() => decodeOptions("file", raw, schema), (e: unknown) => {
      assert.ok(e instanceof ConfigError, String(e));
      assert.doesNotMatch(e.message, /secret/);
      return true;
    });
    await assert.rejects(openStore({ backend: "file", options: raw }), ConfigError);
  }
  await assert.rejects(openStore(trap as never), ConfigError);
  // A store whose info() throws, injected.
  const broken = {
    info() {
      throw new Error("no info");
    },
  } as unknown as Store;
  await assert.rejects(openStore({}, { store: broken }), ConfigError);
  await assert.rejects(openStore({ backend: "file" }, { store: broken }), ConfigError);
  // Definitions: options null, a bad spec, a throwing getter.
  const open = () => Promise.reject(new Error("unused"));
  assert.throws(
    () => registerBackend("nulloptions", { options: null, open } as never),
    ConfigError,
  );
  assert.throws(
    () => registerBackend("badspec", { options: { x: { type: "date" } }, open } as never),
    ConfigError,
  );
  assert.throws(
    () =>
      registerBackend(
        "getter",
        Object.defineProperty({ open }, "options", {
          get() {
            throw new Error("x");
          },
        }) as never,
      ),
    ConfigError,
  );
  // A backend whose open() throws a raw error.
  registerBackend("throwsraw", { options: {}, open: () => Promise.reject(new RangeError("raw")) });
  await assert.rejects(openStore({ backend: "throwsraw" }), ConfigError);
});
