// The file backend's history as evidence (issue 27): what `check` sees without an anchor, through
// mod.ts and through `agentmem check` as an operator runs it, and what it never calls a problem.

import assert from "node:assert/strict";
import {
  auditLog,
  auditStore,
  checkAnchor,
  ConfigError,
  history,
  openFileStore,
  readVersion,
  revertRun,
  saveAnchor,
  Scope,
  type Store,
  UnavailableError,
} from "../../mod.ts";
import { fileTest } from "./_fixture.ts";
import { cli } from "../_lib/cli.ts";

// A store in `<root>/m`: "a" with five versions, "b" with one, "c" created and deleted.
async function busy(root: string): Promise<{ dir: string; store: Store }> {
  const dir = `${root}/m`;
  const store = await openFileStore({ dir });
  await store.create("a", "about a", "v1");
  for (let i = 2; i <= 5; i++) await store.update("a", "about a", `v${i}`);
  await store.create("b", "about b", "b1");
  await store.create("c", "about c", "c1");
  await store.delete("c");
  return { dir, store };
}

async function problems(store: Store): Promise<string[][]> {
  return ((await auditStore(store)).history ?? []).map((p) => [
    p.key,
    p.revision ?? "",
    p.problem,
  ]);
}

// `agentmem check` in `root` on `m`: its exit code and the history lines it printed.
async function checkCli(root: string): Promise<{ code: number; lines: string[] }> {
  const r = await cli(root, ["check", "--dir", "m"]);
  const lines = r.stdout.split("\n");
  const from = lines.findIndex((l) => l.startsWith("history:"));
  return { code: r.code, lines: from < 0 ? [] : lines.slice(from + 1).filter((l) => l !== "") };
}

fileTest("check: a store only the library wrote has no history problem", async (root) => {
  const { store } = await busy(root);
  const scope = new Scope({ run: "r2" });
  await store.create("c", "about c", "again", { scope });
  await revertRun(store, "r2");
  assert.deepEqual(await problems(store), []);
  assert.deepEqual(await checkCli(root), { code: 0, lines: [] });
});

fileTest("records carry chain format 2", async (root) => {
  const { dir } = await busy(root);
  const line = (await Deno.readTextFile(`${dir}/a.md`)).split("\n")[0]!;
  assert.match(line, /^agentmem-version \{"f":2,"seq":5,/);
});

fileTest("check: a head rolled back by hand to an older version is rolled_back", async (root) => {
  const { dir, store } = await busy(root);
  // ln -f .history/a/3.md a.md
  await Deno.remove(`${dir}/a.md`);
  await Deno.link(`${dir}/.history/a/3.md`, `${dir}/a.md`);
  assert.deepEqual(await problems(store), [["a", "4", "rolled_back"]]);
  const { code, lines } = await checkCli(root);
  assert.equal(code, 1);
  assert.match(
    lines.join("\n"),
    /"a" revision 4: rolled_back: the memory holds version 3, but versions 4 to 5/,
  );
  // Written over: the rolled-back versions stay, and check still says so.
  await store.update("a", "about a", "after");
  assert.deepEqual((await history(store, "a")).map((v) => v.revision), ["6", "3", "2", "1"]);
  assert.deepEqual(await problems(store), [["a", "4", "rolled_back"]]);
});

fileTest("check: a head rolled back by one version is rolled_back too", async (root) => {
  const { dir, store } = await busy(root);
  await Deno.remove(`${dir}/a.md`);
  await Deno.link(`${dir}/.history/a/4.md`, `${dir}/a.md`);
  assert.deepEqual(await problems(store), [["a", "5", "rolled_back"]]);
});

fileTest(
  "check and the log judge a memory whose history directory is gone by its head's version",
  async (root) => {
    const { dir, store } = await busy(root);
    await Deno.remove(`${dir}/.history/a`, { recursive: true });
    // Its head is version 5 of a chain whose first four are gone, and no record says why.
    assert.deepEqual(await problems(store), [["a", "5", "truncated"]]);
    const log = await auditLog(store);
    assert.ok(log.some((v) => v.key === "a" && v.revision === "5"));
    assert.equal((await checkCli(root)).code, 1);
    // A memory written with history off and never recorded has no version: nothing to judge.
    const plain = `${root}/plain`;
    const off = await openFileStore({ dir: plain, history: false });
    await off.create("p", "about p", "p1");
    const on = await openFileStore({ dir: plain });
    assert.deepEqual((await auditStore(on)).history ?? [], []);
  },
);

fileTest("check: a head removed by hand with no delete version is removed", async (root) => {
  const { dir, store } = await busy(root);
  await Deno.remove(`${dir}/a.md`);
  await Deno.remove(`${dir}/b.md`);
  assert.deepEqual(await problems(store), [["a", "5", "removed"], ["b", "1", "removed"]]);
  const { code, lines } = await checkCli(root);
  assert.equal(code, 1);
  assert.match(lines[0]!, /"a" revision 5: removed: its memory file is gone/);
});

fileTest("check: a deleted key's delete version removed is removed", async (root) => {
  const { dir, store } = await busy(root);
  await Deno.remove(`${dir}/.history/c/2.md`);
  assert.deepEqual(await problems(store), [["c", "1", "removed"]]);
  assert.equal((await checkCli(root)).code, 1);
});

fileTest(
  "a non-empty directory planted at a key's next version: check names it, writes of that key fail typed",
  async (root) => {
    const { dir, store } = await busy(root);
    await Deno.mkdir(`${dir}/.history/a/6.md/x`, { recursive: true });
    assert.deepEqual(await problems(store), [["a", "6", "foreign"]]);
    await assert.rejects(store.update("a", "about a", "v6"), (e) => {
      assert.ok(e instanceof UnavailableError);
      assert.match(e.message, /\.history\/a\/6\.md is a directory, not a version file/);
      assert.doesNotMatch(e.message, new RegExp(root));
      return true;
    });
    await assert.rejects(store.delete("a"), UnavailableError);
    assert.equal((await store.read("a")).content, "v5");
    await store.update("b", "about b", "b2"); // other keys write on
    assert.equal((await checkCli(root)).code, 1);
  },
);

fileTest("a symlink or a stray file anywhere under .history is foreign", async (root) => {
  const { dir, store } = await busy(root);
  await Deno.mkdir(`${root}/outside`);
  await Deno.symlink(`${root}/outside`, `${dir}/.history/zz`);
  await Deno.symlink(`${root}/outside`, `${dir}/.history/a/9.md`);
  await Deno.writeTextFile(`${dir}/.history/notes.txt`, "planted");
  await Deno.writeTextFile(`${dir}/.history/b/notes.txt`, "planted");
  assert.deepEqual(await problems(store), [
    [".history/notes.txt", "", "foreign"],
    [".history/zz", "", "foreign"],
    ["a", "9", "foreign"],
    ["b", "", "foreign"],
  ]);
  // A key's directory that is a symlink: its writes fail typed, nothing is written outside.
  await Deno.remove(`${dir}/.history/b`, { recursive: true });
  await Deno.symlink(`${root}/outside`, `${dir}/.history/b`);
  await assert.rejects(store.update("b", "about b", "b2"), UnavailableError);
  assert.deepEqual([...Deno.readDirSync(`${root}/outside`)], []);
  assert.ok((await problems(store)).some(([k, , p]) => k === ".history/b" && p === "foreign"));
});

fileTest("check: an edited version, a swapped pair and a cut no record explains", async (root) => {
  const { dir, store } = await busy(root);
  const h = `${dir}/.history/a`;
  await Deno.rename(`${h}/2.md`, `${h}/t`);
  await Deno.rename(`${h}/3.md`, `${h}/2.md`);
  await Deno.rename(`${h}/t`, `${h}/3.md`);
  assert.deepEqual(await problems(store), [["a", "2", "edited"], ["a", "3", "edited"]]);
  await Deno.remove(`${h}/2.md`);
  await Deno.remove(`${h}/3.md`);
  await Deno.remove(`${h}/1.md`);
  assert.deepEqual(await problems(store), [["a", "4", "truncated"]]);
  const { lines } = await checkCli(root);
  assert.match(lines[0]!, /"a" revision 4: truncated: its oldest kept version 4 is not its first/);
});

fileTest(
  "history: false on a directory that keeps history refuses to open for writing",
  async (root) => {
    const { dir } = await busy(root);
    await assert.rejects(openFileStore({ dir, history: false }), (e) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, /option "history" false: it keeps history/);
      return true;
    });
    const reader = await openFileStore({ dir, history: false, readOnly: true });
    assert.equal((await reader.read("a")).content, "v5");
    // A handle opened before the directory kept history never writes without a version.
    const plain = await openFileStore({ dir: `${root}/p`, history: false });
    await plain.create("x", "about x", "1");
    const versioned = await openFileStore({ dir: `${root}/p` });
    await versioned.update("x", "about x", "2");
    await assert.rejects(plain.update("x", "about x", "3"), ConfigError);
    await assert.rejects(plain.delete("x"), ConfigError);
    assert.deepEqual((await history(versioned, "x")).map((v) => v.via), ["api", "unrecorded"]);
  },
);

fileTest("damage on some keys never stops the log, history, a revert or check", async (root) => {
  const { dir, store } = await busy(root);
  const bad = new Scope({ run: "bad" });
  await store.update("a", "about a", "poison", { scope: bad });
  await store.create("d", "about d", "d1");
  await Deno.remove(`${dir}/.history/d/1.md`);
  await Deno.writeTextFile(`${dir}/.history/d/1.md`, "agentmem-version {damaged\n");
  await Deno.writeTextFile(`${dir}/.history/notes.txt`, "planted");
  await Deno.remove(`${dir}/.history/b`, { recursive: true });
  await Deno.writeTextFile(`${dir}/.history/b`, "a file where a directory was");
  const log = await auditLog(store);
  assert.ok(log.some((v) => v.key === "a" && v.run === "bad"));
  assert.deepEqual(
    log.problems.map((p) => [p.key, p.problem]),
    [[".history/b", "foreign"], [".history/notes.txt", "foreign"], ["d", "damaged"]],
  );
  assert.equal((await history(store, "a")).length, 6);
  const undone = await revertRun(store, "bad");
  assert.deepEqual(undone.reverted, ["a"]);
  assert.equal((await store.read("a")).content, "v5");
  assert.equal((await checkCli(root)).code, 1);
});

fileTest(
  "a format-1 store opens, verifies, and check says what format 1 cannot prove",
  async (root) => {
    const dir = `${root}/m`;
    await Deno.mkdir(`${dir}/.history/k`, { recursive: true });
    const { chainHash, GENESIS } = await import("../../store/chain.ts");
    const enc = new TextEncoder();
    let prev = GENESIS;
    for (const [seq, body] of [[1, "one"], [2, "two"]] as const) {
      const entry = enc.encode(`---\ndescription: about k\n---\n${body}`);
      const fields = {
        op: seq === 1 ? "create" : "update",
        at: `2026-11-0${seq}T00:00:00.000Z`,
        via: "api",
        tainted: false,
      } as const;
      const hash = chainHash(prev, { key: "k", ...fields }, entry, 1);
      const line = `agentmem-version ${JSON.stringify({ seq, ...fields, prev, hash })}\n`;
      const bytes = new Uint8Array([...enc.encode(line), ...entry]);
      await Deno.writeFile(`${dir}/.history/k/${seq}.md`, bytes);
      if (seq === 2) await Deno.link(`${dir}/.history/k/2.md`, `${dir}/k.md`);
      prev = hash;
    }
    const store = await openFileStore({ dir });
    const audit = await auditStore(store);
    assert.deepEqual(audit.history, []);
    assert.match(audit.notes?.[0] ?? "", /2 versions of 1 keys are in chain format 1/);
    // Written on in format 2, chained to the format-1 head.
    await store.update("k", "about k", "three");
    assert.deepEqual((await history(store, "k")).map((v) => v.revision), ["3", "2", "1"]);
    assert.deepEqual((await auditStore(store)).history, []);
    assert.deepEqual((await checkAnchor(store, await saveAnchor(store))).problems, []);
    assert.equal((await readVersion(store, "k", "1")).content, "one");
  },
);
