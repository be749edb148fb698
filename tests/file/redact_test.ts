// Redaction on the file backend beyond the conformance suite: a version file with a second name
// (a hard link someone made, or a writer left) holds none of the redacted bytes afterwards, and
// the CLI's check stays clean.

import assert from "node:assert/strict";
import { auditStore, history, openFileStore, redactVersion, Scope } from "../../mod.ts";
import { fileHits } from "../_lib/raw_hits.ts";
import { tempDir } from "../_lib/temp_dir.ts";

Deno.test("[file] redactVersion() clears the version's bytes under every name its file has", async () => {
  await using t = await tempDir();
  const store = await openFileStore({ dir: t.path });
  await store.create("db", "Database", "password MARKER-LINKED");
  await store.update("db", "Database", "see the vault");
  const old = (await history(store, "db")).at(-1)!;
  // A second name of the old version's file, inside the store's directory.
  await Deno.link(`${t.path}/.history/db/${old.revision}.md`, `${t.path}/.backup.${old.revision}`);
  assert.deepEqual(await fileHits(t.path, "MARKER-LINKED"), [
    `.backup.${old.revision}`,
    `.history/db/${old.revision}.md`,
  ]);
  await redactVersion(store, "db", old.revision, {
    reason: "a password",
    scope: new Scope({ actor: "operator" }),
  });
  assert.deepEqual(await fileHits(t.path, "MARKER-LINKED"), []);
  assert.deepEqual((await auditStore(store)).history ?? [], []);
  assert.equal((await store.read("db")).content, "see the vault");
});
