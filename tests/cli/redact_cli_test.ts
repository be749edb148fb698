// `agentmem redact` and `agentmem purge` as an operator runs them, on the file backend and on
// jetstream: the bytes are gone from the raw storage, history and log show who redacted what and
// why, check stays clean; a redaction of the newest version, of a version not kept or malformed,
// no reason, and a purge without --yes are refused, each writing nothing.

import assert from "node:assert/strict";
import { history, openFileStore, Scope, type Store } from "../../mod.ts";
import { cli } from "../_lib/cli.ts";
import { jetstreamTest, natsFixture } from "../_lib/jetstream_fixture.ts";
import { fileHits, streamHits } from "../_lib/raw_hits.ts";
import { tempDir } from "../_lib/temp_dir.ts";

async function erasureDay(
  cwd: string,
  store: Store,
  o: { readonly where: string[]; readonly hits: (marker: string) => Promise<string[]> },
): Promise<void> {
  const run = (...args: string[]) => cli(cwd, [...args, ...o.where]);
  await store.create("db", "Database", "password MARKER-CLI-SECRET");
  const scope = new Scope();
  await store.read("db", { scope });
  await store.update("db", "Database", "password: in the vault", { scope });
  await store.create("pii", "Personal MARKER-CLI-PII", "address MARKER-CLI-PII");
  const [head, leaked] = await history(store, "db");
  const before = JSON.stringify(await history(store, "db"));

  // Refused, naming what is legal, with nothing written.
  const newest = await run("redact", "db", head!.revision, "--reason", "x");
  assert.equal(newest.code, 1);
  assert.match(newest.stderr, /it is what the memory holds now; update or delete the memory first/);
  const unknown = await run("redact", "db", "99999999", "--reason", "x", "--json");
  assert.equal(unknown.code, 1);
  assert.equal(JSON.parse(unknown.stderr).error, "not_found");
  const malformed = await run("redact", "db", "first", "--reason", "x");
  assert.equal(malformed.code, 1);
  assert.match(malformed.stderr, /a revision is a positive whole number/);
  assert.equal((await run("redact", "db", leaked!.revision)).code, 2);
  const unsure = await run("purge", "pii", "--reason", "erasure request");
  assert.equal(unsure.code, 2);
  assert.match(unsure.stderr, /cannot be undone: add --yes/);
  assert.equal(JSON.stringify(await history(store, "db")), before);
  assert.equal((await store.read("pii")).content, "address MARKER-CLI-PII");

  const done = await run("redact", "db", leaked!.revision, "--reason", "a password", "--json");
  assert.equal(done.code, 0, done.stderr);
  assert.deepEqual(JSON.parse(done.stdout).version.redacted.reason, "a password");
  assert.deepEqual(await o.hits("MARKER-CLI-SECRET"), []);
  const shown = await run("history", "db");
  assert.match(shown.stdout, /^\d+\t\S+\tcreate\t.*REDACTED at \S+ by operator: "a password"$/m);
  const check = await run("check");
  assert.equal(check.code, 0, check.stdout + check.stderr);
  assert.match(check.stdout, /note: 1 versions are redacted/);

  const purged = await run("purge", "pii", "--reason", "erasure request", "--yes");
  assert.equal(purged.code, 0, purged.stderr);
  assert.match(purged.stdout, /^purged pii: deleted, 1 version redacted, 0 held writes dropped$/m);
  assert.deepEqual(await o.hits("MARKER-CLI-PII"), []);
  const log = await run("log", "--key", "pii");
  assert.match(log.stdout, /^pii\t\d+\t\S+\tdelete\t.*actor operator, via purge$/m);
  assert.match(
    log.stdout,
    /^pii\t\d+\t\S+\tcreate\t.*REDACTED at \S+ by operator: "erasure request"$/m,
  );
  assert.equal((await run("check")).code, 0);
}

Deno.test("[file] agentmem redact and purge: the bytes are gone, history says who and why", async () => {
  await using t = await tempDir();
  const dir = `${t.path}/store`;
  const store = await openFileStore({ dir });
  await erasureDay(t.path, store, { where: ["--dir", dir], hits: (m) => fileHits(dir, m) });
});

jetstreamTest(
  "agentmem redact and purge: the bytes are gone, history says who and why",
  async () => {
    await using t = await tempDir();
    await using nats = await natsFixture();
    const store = await nats.open({ prefix: "" });
    await erasureDay(t.path, store, {
      where: ["--servers", nats.server.url, "--bucket", "memory"],
      hits: (m) => streamHits(nats.nc, "memory", m),
    });
  },
);
