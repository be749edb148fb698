// The review queue over HTTP against a real `agentmem serve`: the held writes listed with their
// provenance, each with the diff of what approving writes, approve and reject through the page's
// own form (read-only refused), and an approval confirmed on a memory that moved since writing
// nothing.

import assert from "node:assert/strict";
import { history, proposals, Scope } from "../../mod.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { DAY, reviewedDay, serve } from "../_lib/console.ts";

Deno.test("serve: the review queue shows each held write with its diff; approve and reject", async () => {
  await using tmp = await tempDir("agentmem-console-");
  const store = await reviewedDay(tmp.path);
  const [update, create] = await proposals(store);
  assert.equal(update?.key, "user.prefs");
  await using s = await serve(["--dir", tmp.path, "--write"]);
  assert.match(await s.page("/"), /2 writes held for an operator/);
  const queue = await s.page("/review");
  assert.match(queue, new RegExp(`href="/review/${update!.id}"`));
  assert.match(queue, /toolu_bad_1|memory_write/);
  assert.match(queue, /class="tainted"/);
  assert.doesNotMatch(queue, /<script|<img|<iframe/);
  const detail = await s.page(`/review/${update!.id}`);
  assert.match(detail, /<h2>What approving writes<\/h2>/);
  assert.match(detail, /short answers/); // the line the update removes
  assert.match(detail, /&lt;script&gt;alert\(&#39;body&#39;\)/); // and the hostile one it adds
  assert.doesNotMatch(detail, /<script|<img|<iframe/);
  assert.doesNotMatch(await s.page(`/review/${create!.id}`), /<script|<img|<iframe/);
  const approved = await s.submit(`/review/${update!.id}`, `/review/${update!.id}/approve`);
  assert.equal(approved.status, 200, await approved.clone().text());
  assert.equal((await store.read("user.prefs")).content.includes("evil.example"), true);
  assert.equal((await history(store, "user.prefs"))[0]?.via, "review");
  const rejected = await s.submit(`/review/${create!.id}`, `/review/${create!.id}/reject`, {
    reason: "planted by a web page",
  });
  assert.equal(rejected.status, 200);
  await assert.rejects(store.read("note.planted"));
  assert.equal((await proposals(store)).length, 0);
  const decided = await s.page("/review?status=decided");
  assert.match(decided, /approved/);
  assert.match(decided, /rejected[^<]*<time[^>]*>[^<]*<\/time> by operator: planted by a web page/);
  const { stderr } = await s.stop();
  assert.match(stderr, new RegExp(`approved proposal ${update!.id}`));
  assert.match(stderr, new RegExp(`rejected proposal ${create!.id}`));
});

Deno.test("serve: an approval refused read-only, and one confirmed on a memory that moved writes nothing", async () => {
  await using tmp = await tempDir("agentmem-console-");
  const store = await reviewedDay(tmp.path);
  const [update] = await proposals(store);
  {
    await using ro = await serve(["--dir", tmp.path]);
    const page = await ro.page(`/review/${update!.id}`);
    assert.doesNotMatch(page, /method="post"/);
    const r = await ro.fetch(`/review/${update!.id}/approve`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: ro.origin },
      body: "head=1",
    });
    assert.equal(r.status, 403);
    assert.match(await r.text(), /--write/);
  }
  await using s = await serve(["--dir", tmp.path, "--write"]);
  const page = await s.page(`/review/${update!.id}`);
  await store.update("user.prefs", "User preferences", "changed meanwhile\n", {
    scope: new Scope({ run: "run-meanwhile" }),
  });
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
  const head = /name="head" value="([^"]+)"/.exec(page)![1]!;
  const r = await s.fetch(`/review/${update!.id}/approve`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: s.origin },
    body: new URLSearchParams({ csrf, head }),
  });
  const text = await r.text();
  assert.equal(r.status, 409);
  assert.match(text, /nothing was decided/);
  assert.match(text, /approving needs force/);
  assert.equal((await store.read("user.prefs")).content, "changed meanwhile\n");
  assert.equal((await proposals(store)).length, 2);
  void DAY;
});
