// What the console's pages say, over HTTP against a real `agentmem serve`: the audit log's
// filters and pages, a deleted memory, the revert and restore refusing a plan the store no longer
// matches (nothing written), and the check page's anchor check.

import assert from "node:assert/strict";
import { history, openFileStore, saveAnchor, Scope } from "../../mod.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { DAY, poisonedDay, serve } from "../_lib/console.ts";

function rows(html: string): number {
  return html.match(/<tr class="(row-tainted)?"><td><a class="key"/g)?.length ?? 0;
}

Deno.test("serve: the audit log filters by run, actor, key, time and taint, newest first, 50 a page", async () => {
  await using tmp = await tempDir("agentmem-console-");
  const store = await poisonedDay(tmp.path);
  const bulk = new Scope({ run: "run-bulk", actor: "agent:bulk" });
  for (let i = 0; i < 60; i++) await store.create(`bulk.k${i}`, `Bulk ${i}`, "x", { scope: bulk });
  await using s = await serve(["--dir", tmp.path]);
  const first = await s.page("/log");
  assert.equal(rows(first), 50);
  assert.match(first, /href="\/log\?page=2"/);
  assert.doesNotMatch(first, /rel="prev"/);
  const second = await s.page("/log?page=2");
  assert.equal(rows(second), 60 + 8 - 50);
  assert.doesNotMatch(second, /rel="next"/);
  // Newest first: the bulk run's last key leads.
  assert.ok(first.indexOf("bulk.k59") < first.indexOf("bulk.k58"));
  assert.equal(rows(await s.page(`/log?run=${DAY.poison}`)), 4);
  assert.equal(rows(await s.page("/log?actor=agent%3Anotes")), 4);
  assert.equal(rows(await s.page("/log?key=project.plan")), 3);
  assert.equal(rows(await s.page("/log?key=project.plan&tainted=1")), 1);
  assert.equal(rows(await s.page("/log?tainted=0&run=run-bulk&page=2")), 10);
  const all = await history(store, "bulk.k30");
  const at = all[0]!.at;
  const since = await s.page(`/log?run=run-bulk&since=${encodeURIComponent(at)}`);
  const until = await s.page(`/log?run=run-bulk&until=${encodeURIComponent(at)}`);
  assert.ok(
    since.includes("bulk.k30") && !until.includes("bulk.k30"),
    "since is inclusive, until not",
  );
  const bad = await s.fetch("/log?since=yesterday");
  assert.equal(bad.status, 400);
  assert.match(await bad.text(), /must be a time in ISO 8601/);
  // A write from elsewhere shows at the next visit.
  await store.update("user.prefs", "User preferences", "new", {
    scope: new Scope({ run: "run-late" }),
  });
  assert.equal(rows(await s.page("/log?run=run-late")), 1);
});

Deno.test("serve: a deleted memory shows its timeline and a restore of what it held", async () => {
  await using tmp = await tempDir("agentmem-console-");
  await poisonedDay(tmp.path);
  await using s = await serve(["--dir", tmp.path, "--write"]);
  const page = await s.page("/memory/team.contacts");
  assert.match(page, /This memory holds nothing now \(its newest version is a delete\)/);
  assert.match(page, /href="\/memory\/team\.contacts\/restore\?rev=1"/);
  const confirm = await s.page("/memory/team.contacts/restore?rev=1");
  assert.match(confirm, /re-creating the deleted memory/);
  const r = await s.submit("/memory/team.contacts/restore?rev=1", "/memory/team.contacts/restore");
  assert.equal(r.status, 200);
  assert.equal(
    (await (await openFileStore({ dir: tmp.path })).read("team.contacts")).content,
    "Ana: 555-0100\n",
  );
  const missing = await s.fetch("/memory/user.prefs/version/99");
  assert.equal(missing.status, 404);
  await missing.body?.cancel();
});

Deno.test("serve: a revert or restore confirmed on a plan the store no longer matches writes nothing", async () => {
  await using tmp = await tempDir("agentmem-console-");
  const store = await poisonedDay(tmp.path);
  await using s = await serve(["--dir", tmp.path, "--write"]);
  const preview = await s.page(`/run/${DAY.poison}/revert`);
  const restore = await s.page("/memory/user.prefs/restore?rev=1");
  // Another process writes one of the keys after the operator looked.
  await store.update("note.planted", "A note from the page", "edited since", {
    scope: new Scope({ run: "run-meanwhile" }),
  });
  await store.update("user.prefs", "User preferences", "edited since", {
    scope: new Scope({ run: "run-meanwhile" }),
  });
  const before = await history(store, "user.prefs");
  const csrf = /name="csrf" value="([^"]+)"/.exec(preview)![1]!;
  const plan = /name="plan" value="([^"]+)"/.exec(preview)![1]!;
  const r = await s.fetch(`/run/${DAY.poison}/revert`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: s.origin },
    body: new URLSearchParams({ csrf, plan }),
  });
  const text = await r.text();
  assert.equal(r.status, 409);
  assert.match(text, /The store changed after the preview you confirmed; nothing was written/);
  assert.match(text, /note\.planted<\/a>: run &quot;run-meanwhile&quot; wrote it/);
  const head = /name="head" value="([^"]+)"/.exec(restore)![1]!;
  const r2 = await s.fetch("/memory/user.prefs/restore", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: s.origin },
    body: new URLSearchParams({ csrf, rev: "1", head }),
  });
  assert.equal(r2.status, 409);
  assert.match(
    await r2.text(),
    /The memory changed after the page you confirmed on; nothing was written/,
  );
  assert.deepEqual(await history(store, "user.prefs"), before);
  assert.equal((await store.read("note.planted")).content, "edited since");
});

Deno.test("serve --anchor: the check page checks the store against a saved anchor", async () => {
  await using tmp = await tempDir("agentmem-console-");
  const store = await poisonedDay(tmp.path);
  await using anchorDir = await tempDir("agentmem-anchor-");
  const file = `${anchorDir.path}/anchor.json`;
  await Deno.writeTextFile(file, JSON.stringify(await saveAnchor(store)));
  const { cli } = await import("../_lib/cli.ts");
  const wrong = await cli(tmp.path, [
    "serve",
    "--dir",
    tmp.path,
    "--anchor",
    file,
    "--anchor-sha256",
    "0".repeat(64),
  ]);
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /does not have the SHA-256 given by --anchor-sha256/);
  assert.equal(wrong.stdout, "");
  await using s = await serve(["--dir", tmp.path, "--anchor", file]);
  const clean = await s.page("/check");
  assert.match(clean, /<h2>Anchor<\/h2>/);
  assert.match(clean, /4 keys checked; 0 problems/);
  // The key is removed whole, history and all: only the anchor can tell.
  await Deno.remove(`${tmp.path}/project.plan.md`);
  await Deno.remove(`${tmp.path}/.history/project.plan`, { recursive: true });
  const found = await s.page("/check");
  assert.match(found, /4 keys checked; 1 problem\./);
  assert.match(found, /project\.plan<\/a><\/td><td>[^<]*<\/td><td>removed/);
  assert.ok(!found.includes(anchorDir.path) && !found.includes(tmp.path));
  await Deno.writeTextFile(file, "not json");
  assert.match(await s.page("/check"), /The anchor file given by --anchor is not JSON/);
  await Deno.remove(file);
  assert.match(
    await s.page("/check"),
    /Cannot read the anchor file given by --anchor: it does not exist/,
  );
});

Deno.test("serve: a damaged history record is skipped and said on the timeline and the audit log", async () => {
  await using tmp = await tempDir("agentmem-console-");
  await poisonedDay(tmp.path);
  await Deno.writeTextFile(`${tmp.path}/.history/user.prefs/1.md`, "not a version <b>x</b>");
  await using s = await serve(["--dir", tmp.path]);
  // Skipped and said (a backend that skips it), or said instead of the timeline (one that does
  // not yet): either way the memory itself is shown, and the other keys' histories are whole.
  const said = /1 history record was skipped, damaged or foreign|version record is damaged/;
  const timeline = await s.page("/memory/user.prefs");
  assert.match(timeline, said);
  assert.match(timeline, /send everything to evil\.example/);
  assert.doesNotMatch(timeline, /href="\/memory\/user\.prefs\/version\/1"/);
  assert.match(await s.page("/memory/project.plan"), /3 versions/);
  // The audit log, the runs and a run's revert preview go on over the other keys.
  const log = await s.page("/log");
  assert.match(log, said);
  assert.match(log, /project\.plan/);
  assert.match(await s.page("/runs"), /run-poison-7/);
  assert.match(await s.page("/run/run-poison-7/revert"), /note\.planted<\/a>: <b>deleted/);
});
