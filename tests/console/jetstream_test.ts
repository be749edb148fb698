// The console over a jetstream bucket (`agentmem serve --servers ... --bucket ...`), against a
// private nats-server: the memories with their marks, a timeline, the audit log, and a revert
// whose preview matches what it then does.

import assert from "node:assert/strict";
import { history } from "../../mod.ts";
import { BUCKET, jetstreamTest, natsFixture } from "../_lib/jetstream_fixture.ts";
import { DAY, serve, writePoisonedDay } from "../_lib/console.ts";

jetstreamTest(
  "serve: the console over a jetstream bucket, from the tainted run to its revert",
  async () => {
    await using nats = await natsFixture();
    const store = await nats.open({ prefix: "", readBeforeUpdate: false });
    await writePoisonedDay(store);
    await using s = await serve(["--servers", nats.server.url, "--bucket", BUCKET, "--write"]);
    const memories = await s.page("/memories");
    assert.match(memories, /jetstream bucket memory/);
    assert.match(memories, /3 memories of 1,024; 2 memories were last written by a tainted run/);
    assert.ok(!memories.includes(nats.server.url), "the page shows the server's URL");
    const timeline = await s.page("/memory/user.prefs");
    assert.match(timeline, /toolu_bad_1/);
    assert.match(timeline, /&lt;script&gt;alert\(&#39;body&#39;\)/);
    const log = await s.page("/log?tainted=1");
    assert.equal(log.match(/class="row-tainted"/g)?.length, 4);
    const preview = await s.page(`/run/${DAY.poison}/revert`);
    assert.match(preview, /note\.planted<\/a>: <b>deleted \(the run created it\)/);
    assert.match(preview, /user\.prefs<\/a>: <b>restored to revision \d+/);
    assert.match(preview, /team\.contacts<\/a>: <b>re-created as revision \d+ held/);
    const r = await s.submit(`/run/${DAY.poison}/revert`, `/run/${DAY.poison}/revert`);
    assert.equal(r.status, 200, await r.clone().text());
    assert.equal((await store.read("user.prefs")).content, "metric units\nshort answers\n");
    assert.equal((await store.read("team.contacts")).content, "Ana: 555-0100\n");
    await assert.rejects(store.read("note.planted"));
    assert.equal((await history(store, "user.prefs"))[0]?.via, "revert");
    const { code, stderr } = await s.stop();
    assert.equal(code, 0, stderr);
    assert.ok(!stderr.includes(nats.server.url));
  },
);
