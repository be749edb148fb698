// The CLI on a jetstream bucket shared by agents under their own prefixes: a command given a key
// that lives only under another prefix says so, names the prefix and prints the command that
// shows it there (issue 27: `history user.units` without the prefix said "no versions", exit 0).

import assert from "node:assert/strict";
import { Scope } from "../../mod.ts";
import { cli } from "../_lib/cli.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { BUCKET, jetstreamTest, natsFixture } from "../_lib/jetstream_fixture.ts";

jetstreamTest(
  "cli: a key that lives under another prefix is named there, with the command",
  async () => {
    await using t = await tempDir();
    await using f = await natsFixture();
    const agent = await f.open({ prefix: "travel-agent" });
    const scope = new Scope({ run: "run-1" });
    await agent.create("user.units", "Units the user prefers", "metric", { scope });
    await agent.create("trip.gone", "A deleted note", "x", { scope });
    await agent.delete("trip.gone", { scope });
    const js = ["--servers", f.server.url, "--bucket", BUCKET];

    const h = await cli(t.path, ["history", "user.units", ...js]);
    assert.equal(h.code, 1, h.stdout);
    assert.match(h.stderr, /not under prefix "" but exists under prefix "travel-agent"/);
    const fix = /(agentmem history user\.units --prefix travel-agent[^\n]*)/.exec(h.stderr)?.[1];
    assert.ok(fix, h.stderr);
    assert.match(fix, /--servers=\S+ --bucket=memory/);
    // The printed command runs as printed.
    const again = await cli(t.path, fix.split(" ").slice(1).flatMap((a) => a.split(/=(.*)/s, 2)));
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^user\.units: 1 version, newest first/);

    const r = await cli(t.path, ["read", "user.units", ...js]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no memory has this key; it is not under prefix "" but exists under/);
    // A deleted key is found through its history.
    const d = await cli(t.path, ["history", "trip.gone", ...js, "--prefix", "other-agent"]);
    assert.equal(d.code, 1);
    assert.match(d.stderr, /exists under prefix "travel-agent"/);
    // A key that is nowhere: the plain answer.
    const none = await cli(t.path, ["history", "never.written", ...js]);
    assert.equal(none.code, 0, none.stderr);
    assert.match(none.stdout, /no versions \(never written, or pruned\)/);
  },
);

jetstreamTest(
  "cli: check means the same whatever prefix it is given, and names the prefixes it saw",
  async () => {
    await using t = await tempDir();
    await using f = await natsFixture();
    const travel = await f.open({ prefix: "travel-agent" });
    const notes = await f.open({ prefix: "notes-agent" });
    const scope = new Scope({ run: "run-1" });
    for (const k of ["user.units", "trip.lisbon", "trip.paris"]) {
      await travel.create(k, `about ${k}`, "v1", { scope });
    }
    await notes.create("todo", "about todo", "v1", { scope });
    const bad = new Scope({ run: "run-bad", tainted: true });
    await travel.read("user.units", { scope: bad });
    await travel.update("user.units", "about user.units", "poisoned", { scope: bad });
    const js = ["--servers", f.server.url, "--bucket", BUCKET];
    // Undone through the agent's prefix, checked through every other.
    const undo = await cli(t.path, [
      "revert",
      "--run",
      "run-bad",
      ...js,
      "--prefix",
      "travel-agent",
    ]);
    assert.equal(undo.code, 0, undo.stderr);
    for (
      const prefix of [[], ["--prefix", ""], ["--prefix", "travel-agent"], [
        "--prefix",
        "notes-agent",
      ]]
    ) {
      const r = await cli(t.path, ["check", ...js, ...prefix, "--json"]);
      assert.equal(r.code, 0, `${prefix.join(" ")}: ${r.stdout}${r.stderr}`);
      assert.deepEqual(JSON.parse(r.stdout).history, [], prefix.join(" "));
    }
    const whole = await cli(t.path, ["check", ...js]);
    assert.match(whole.stdout, /looked at every prefix: "notes-agent" 1, "travel-agent" 3/);
    const json = JSON.parse((await cli(t.path, ["check", ...js, "--json"])).stdout);
    assert.deepEqual(json.prefixes, { "notes-agent": 1, "travel-agent": 3 });
  },
);
