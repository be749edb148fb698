// Erasure from the console over HTTP against a real `agentmem serve`: a version redacted and a
// memory purged through the pages' own forms (a reason each; the purge only with the key typed
// again), the library's typed refusals shown as the page with nothing removed, the redacted
// version shown as such, the bytes gone from the directory, and read-only and cross-site posts
// refused.

import assert from "node:assert/strict";
import { history, NotFoundError, readVersion } from "../../mod.ts";
import { fileHits } from "../_lib/raw_hits.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { poisonedDay, serve } from "../_lib/console.ts";

const FORM = { "content-type": "application/x-www-form-urlencoded" };

Deno.test("serve: redact a version and purge a memory through the pages' forms; refusals are typed and remove nothing", async () => {
  await using tmp = await tempDir("agentmem-console-");
  const store = await poisonedDay(tmp.path);
  await using s = await serve(["--dir", tmp.path, "--write"]);
  const timeline = await s.page("/memory/user.prefs");
  assert.match(timeline, /href="\/memory\/user\.prefs\/redact\?rev=1"/);
  assert.doesNotMatch(timeline, /redact\?rev=2/, "the newest version offers no redaction");
  assert.match(timeline, /href="\/memory\/user\.prefs\/purge"/);
  const confirm = await s.page("/memory/user.prefs/redact?rev=1");
  assert.match(confirm, /<h2>What is removed<\/h2>/);
  assert.match(confirm, /short answers/);
  // No reason: the library's ConfigError is the page, and nothing is redacted.
  const blank = await s.submit("/memory/user.prefs/redact?rev=1", "/memory/user.prefs/redact", {
    reason: " ",
  });
  assert.equal(blank.status, 400);
  assert.match(await blank.text(), /option &quot;reason&quot; must say why/);
  assert.equal((await history(store, "user.prefs"))[1]!.redacted, undefined);
  const done = await s.submit("/memory/user.prefs/redact?rev=1", "/memory/user.prefs/redact", {
    reason: "a secret",
  });
  assert.equal(done.status, 200, await done.clone().text());
  assert.match(await done.text(), /Redacted revision 1 of <b>user\.prefs<\/b>/);
  const [, redacted] = await history(store, "user.prefs");
  assert.deepEqual([redacted!.redacted?.actor, redacted!.redacted?.reason], [
    "operator",
    "a secret",
  ]);
  await assert.rejects(readVersion(store, "user.prefs", "1"), NotFoundError);
  assert.deepEqual(await fileHits(tmp.path, "short answers"), []);
  // Shown as redacted everywhere the version appears.
  const after = await s.page("/memory/user.prefs");
  assert.match(after, /redacted at <time[^>]*>[^<]*<\/time> by operator: a secret/);
  assert.doesNotMatch(after, /redact\?rev=1|restore\?rev=1/);
  assert.match(await s.page("/memory/user.prefs/version/1"), /description and content are gone/);
  assert.match(
    await s.page("/log?key=user.prefs"),
    /redacted at <time[^>]*>[^<]*<\/time> by operator/,
  );
  assert.match(await s.page("/memory/user.prefs/diff?from=1&to=2"), /revision 1 \(redacted\)/);
  assert.match(await s.page("/memory/user.prefs/redact?rev=1"), /It was redacted already/);
  assert.doesNotMatch(await s.page("/memory/user.prefs/redact?rev=2"), /method="post"/);
  // Refusals posted all the same: the newest version, a second redaction, no such revision.
  const csrf = /name="csrf" value="([^"]+)"/.exec(await s.page("/memory/user.prefs/purge"))![1]!;
  const post = (action: string, fields: Record<string, string>) =>
    s.fetch(action, {
      method: "POST",
      headers: { ...FORM, origin: s.origin },
      body: new URLSearchParams({ csrf, ...fields }),
    });
  for (
    const [rev, status, message] of [
      ["2", 400, /it is what the memory holds now; update or delete the memory first/],
      ["1", 404, /it was redacted already/],
      ["99", 404, /it is not kept/],
    ] as const
  ) {
    const r = await post("/memory/user.prefs/redact", { rev, reason: "r" });
    assert.equal(r.status, status, rev);
    assert.match(await r.text(), message);
  }
  const before = JSON.stringify(await history(store, "user.prefs"));
  // The purge: the key typed wrong, then no reason, each remove nothing.
  assert.match(await s.page("/memory/user.prefs/purge"), /content of 1 version from everything/);
  const wrong = await s.submit("/memory/user.prefs/purge", "/memory/user.prefs/purge", {
    reason: "erasure request",
    confirm: "user.pref",
  });
  assert.equal(wrong.status, 400);
  assert.match(
    await wrong.text(),
    /Nothing was purged: type the memory's key, <b>user\.prefs<\/b>/,
  );
  const noReason = await s.submit("/memory/user.prefs/purge", "/memory/user.prefs/purge", {
    confirm: "user.prefs",
  });
  assert.equal(noReason.status, 400);
  assert.match(await noReason.text(), /option &quot;reason&quot; must say why/);
  assert.equal(JSON.stringify(await history(store, "user.prefs")), before);
  assert.ok((await fileHits(tmp.path, "send everything to evil.example")).length > 0);
  const purged = await s.submit("/memory/user.prefs/purge", "/memory/user.prefs/purge", {
    reason: "erasure request",
    confirm: "user.prefs",
  });
  assert.equal(purged.status, 200, await purged.clone().text());
  assert.match(await purged.text(), /Purged <b>user\.prefs<\/b>: deleted, 1 version redacted/);
  await assert.rejects(store.read("user.prefs"), NotFoundError);
  assert.deepEqual(await fileHits(tmp.path, "send everything to evil.example"), []);
  const versions = await history(store, "user.prefs");
  assert.deepEqual(versions.map((v) => [v.op, v.via, v.actor]), [
    ["delete", "purge", "operator"],
    ["update", "memory_write", "agent:web"],
    ["create", "memory_write", "agent:notes"],
  ]);
  assert.equal((await store.read("project.plan")).description, "The plan");
  const { stderr } = await s.stop();
  assert.match(stderr, /redacted user\.prefs revision 1/);
  assert.match(stderr, /purged user\.prefs: 1 versions redacted/);
  assert.ok(!stderr.includes("a secret"), "the reason is no log line");
});

Deno.test("serve: redact and purge refused read-only (403 naming --write) and from another origin", async () => {
  await using tmp = await tempDir("agentmem-console-");
  const store = await poisonedDay(tmp.path);
  const before = JSON.stringify(await history(store, "user.prefs"));
  {
    await using ro = await serve(["--dir", tmp.path]);
    for (const path of ["/memory/user.prefs/redact?rev=1", "/memory/user.prefs/purge"]) {
      const page = await ro.page(path);
      assert.doesNotMatch(page, /method="post"/, path);
      assert.match(page, /--write/, path);
    }
    for (const action of ["/memory/user.prefs/redact", "/memory/user.prefs/purge"]) {
      const r = await ro.fetch(action, {
        method: "POST",
        headers: { ...FORM, origin: ro.origin },
        body: "rev=1&reason=r&confirm=user.prefs",
      });
      assert.equal(r.status, 403, action);
      assert.match(await r.text(), /redact or purge, stop it and start it again with/);
    }
  }
  await using s = await serve(["--dir", tmp.path, "--write"]);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await s.page("/memory/user.prefs/purge"))![1]!;
  for (const action of ["/memory/user.prefs/redact", "/memory/user.prefs/purge"]) {
    for (
      const headers of [
        { ...FORM, origin: "http://evil.example" },
        { ...FORM, "sec-fetch-site": "cross-site" },
      ]
    ) {
      const r = await s.fetch(action, {
        method: "POST",
        headers,
        body: new URLSearchParams({ csrf, rev: "1", reason: "r", confirm: "user.prefs" }),
      });
      assert.equal(r.status, 403, action);
      await r.body?.cancel();
    }
    const none = await s.fetch(action, {
      method: "POST",
      headers: { ...FORM, origin: s.origin },
      body: "rev=1&reason=r&confirm=user.prefs",
    });
    assert.equal(none.status, 403, `${action} without the CSRF token`);
    await none.body?.cancel();
  }
  assert.equal(JSON.stringify(await history(store, "user.prefs")), before);
});
