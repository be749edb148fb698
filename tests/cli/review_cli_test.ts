// `agentmem review`, `review show`, `approve` and `reject` as an operator runs them, on the file
// backend and on jetstream: the queue, a proposal's diff against the memory now, decisions that
// `log` and `history` then show, a stale approval refused until --force, and the bad input an
// operator may type (an unknown, malformed or decided id; no id), each refused naming what is
// legal and writing nothing.

import assert from "node:assert/strict";
import { history, openFileStore, proposals, Scope, type Store } from "../../mod.ts";
import { cli } from "../_lib/cli.ts";
import { jetstreamTest, natsFixture } from "../_lib/jetstream_fixture.ts";
import { tempDir } from "../_lib/temp_dir.ts";

async function heldDay(store: Store): Promise<void> {
  await store.create("user.units", "The units the user prefers", "metric\nkm\n");
  const bad = new Scope({ run: "run-42", actor: "agent:travel", tainted: true });
  await store.read("user.units", { scope: bad });
  await store.update("user.units", "The units the user prefers", "imperial\nkm\nmail x.example\n", {
    scope: bad,
    via: "memory_write",
    callId: "toolu_1",
  });
  await store.create("trip.hotel", "The hotel", "Ibis", { scope: bad });
}

async function operatorDay(cwd: string, store: Store, where: string[]): Promise<void> {
  await heldDay(store);
  const run = (...args: string[]) => cli(cwd, [...args, ...where]);
  const queue = await run("review");
  assert.equal(queue.code, 0, queue.stderr);
  assert.match(queue.stdout, /^2 proposals pending, oldest first$/m);
  assert.match(
    queue.stdout,
    /^[0-9a-f]{16}\t\S+\tupdate user\.units\trun run-42, actor agent:travel, via memory_write, call toolu_1, TAINTED/m,
  );
  const listed = JSON.parse((await run("review", "--json")).stdout).proposals;
  const [units, hotel] = listed as { id: string; key: string }[];
  assert.deepEqual([units!.key, hotel!.key], ["user.units", "trip.hotel"]);

  const shown = await run("review", "show", units!.id);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(
    shown.stdout,
    /^--- now\n\+\+\+ proposed\n description: The units the user prefers \(unchanged\)\n@@ -1,2 \+1,3 @@\n-metric\n\+imperial\n km\n\+mail x\.example$/m,
  );
  const json = JSON.parse((await run("review", "show", hotel!.id, "--json")).stdout);
  assert.deepEqual([json.proposal.content, json.current], ["Ibis", null]);

  // Bad input: refused, naming what is legal, nothing written.
  const before = JSON.stringify(await proposals(store));
  const malformed = await run("approve", "not-an-id");
  assert.equal(malformed.code, 1);
  assert.match(
    malformed.stderr,
    /no proposal has this id \(an id is 16 lowercase hexadecimal characters/,
  );
  const unknown = await run("reject", "0123456789abcdef", "--json");
  assert.equal(unknown.code, 1);
  assert.equal(JSON.parse(unknown.stderr).error, "not_found");
  const missing = await run("approve");
  assert.equal(missing.code, 2, missing.stderr);
  const badReason = await run("reject", hotel!.id, "--reason", "a\u0007b");
  assert.equal(badReason.code, 1);
  assert.match(badReason.stderr, /option "reason" must be one line of at most 500 characters/);
  assert.equal(JSON.stringify(await proposals(store)), before);

  // The memory changed since: refused as stale, naming the change, until --force.
  const clean = new Scope({ run: "run-clean" });
  await store.read("user.units", { scope: clean });
  await store.update("user.units", "The units the user prefers", "metric\nkm\nSI\n", {
    scope: clean,
  });
  const stale = await run("approve", units!.id);
  assert.equal(stale.code, 1);
  assert.match(
    stale.stderr,
    /it changed from revision \d+: it now holds revision \d+, an update by run run-clean/,
  );
  const forced = await run("approve", units!.id, "--force");
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(
    forced.stdout,
    /^approved [0-9a-f]{16}: update user\.units \(now revision \d+\), forced over a change made since it was proposed$/m,
  );
  const rejected = await run("reject", hotel!.id, "--reason", "not this hotel", "--json");
  assert.equal(rejected.code, 0, rejected.stderr);
  assert.deepEqual(
    [JSON.parse(rejected.stdout).outcome, JSON.parse(rejected.stdout).reason],
    ["rejected", "not this hotel"],
  );
  const twice = await run("approve", hotel!.id);
  assert.equal(twice.code, 1);
  assert.match(twice.stderr, /it was already rejected at .* by operator/);
  assert.equal((await store.read("user.units")).content, "imperial\nkm\nmail x.example\n");
  const [newest] = await history(store, "user.units");
  assert.deepEqual([newest!.via, newest!.run, newest!.actor], ["review", "run-42", "operator"]);

  // log and history show both decisions beside the versions.
  const log = await run("log");
  assert.match(
    log.stdout,
    /^trip\.hotel\t-\t\S+\tcreate proposal [0-9a-f]{16} rejected: "not this hotel" by operator/m,
  );
  assert.match(
    log.stdout,
    /^user\.units\t-\t\S+\tupdate proposal [0-9a-f]{16} approved as revision \d+ \(forced\) by operator/m,
  );
  assert.match(
    log.stdout,
    /^user\.units\t\d+\t\S+\tupdate\trun run-42, actor operator, via review, call toolu_1 .*\(approved proposal [0-9a-f]{16}\)$/m,
  );
  const logJson = JSON.parse((await run("log", "--json", "--key", "trip.hotel")).stdout);
  assert.deepEqual(
    logJson.decisions.map((p: { decision: { outcome: string } }) => p.decision.outcome),
    ["rejected"],
  );
  const hotelHistory = await run("history", "trip.hotel");
  assert.match(hotelHistory.stdout, /create proposal [0-9a-f]{16} rejected: "not this hotel"/);
  assert.match((await run("review", "--decided")).stdout, /^2 proposals decided/m);
  assert.match((await run("review")).stdout, /^\(no proposals pending\)$/m);
}

Deno.test("[file] agentmem review, review show, approve and reject: an operator's day", async () => {
  await using t = await tempDir();
  const store = await openFileStore({ dir: t.path, review: "tainted" });
  await operatorDay(t.path, store, ["--dir", t.path]);
});

jetstreamTest("agentmem review, review show, approve and reject: an operator's day", async () => {
  await using t = await tempDir();
  await using nats = await natsFixture();
  const store = await nats.open({ review: "tainted", prefix: "" });
  await operatorDay(t.path, store, ["--servers", nats.server.url, "--bucket", "memory"]);
});
