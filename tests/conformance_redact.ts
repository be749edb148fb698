// Redaction and purge on every backend that keeps history (part of the one conformance suite):
// the bytes are gone from everything the backend keeps (the fixture searches its raw storage for
// a planted marker), the version keeps its place, provenance and hash, check stays clean and says
// what was redacted, and every refusal is a typed error that writes nothing. Registered by
// `conformance()` for fixtures that can search their raw storage (`rawHits`).

import assert from "node:assert/strict";
import {
  approveProposal,
  auditStore,
  checkAnchor,
  ConfigError,
  history,
  NotFoundError,
  proposals,
  purgeKey,
  ReadOnlyError,
  readOnlyStore,
  readVersion,
  redactVersion,
  restoreVersion,
  saveAnchor,
  Scope,
  type Store,
} from "../mod.ts";
import type { Fixture } from "./_lib/fixture.ts";

type Register = (name: string, fn: (f: Fixture) => Promise<void>) => void;

const OPERATOR = new Scope({ actor: "operator" });

// A revision-checked update wherever the backend checks.
async function update(store: Store, key: string, description: string, content: string) {
  const scope = new Scope();
  await store.read(key, { scope });
  await store.update(key, description, content, { scope });
}

async function clean(store: Store): Promise<string[]> {
  const audit = await auditStore(store);
  assert.deepEqual(audit.history ?? [], [], JSON.stringify(audit.history));
  return [...(audit.notes ?? [])];
}

/** Registers the redaction cases. */
export function redactConformance(test: Register): void {
  test("redact: a version's description and content are gone from every copy; check still verifies it", async (f) => {
    const { store } = f;
    await store.create("db", "Database MARKER-DESC-1", "password MARKER-BODY-1");
    await update(store, "db", "Database", "password: see the vault");
    await update(store, "db", "Database", "password: in the vault");
    const anchor = await saveAnchor(store);
    const leaked = (await history(store, "db")).at(-1)!;
    assert.ok((await f.rawHits!("MARKER-BODY-1")).length > 0, "the marker was written");
    const redacted = await redactVersion(store, "db", leaked.revision, {
      reason: "a password",
      scope: OPERATOR,
    });
    assert.deepEqual([redacted.redacted?.reason, redacted.redacted?.actor], [
      "a password",
      "operator",
    ]);
    assert.equal(redacted.description, undefined);
    assert.deepEqual(await f.rawHits!("MARKER-BODY-1"), []);
    assert.deepEqual(await f.rawHits!("MARKER-DESC-1"), []);
    // Its place and provenance stay; reading it says why it is gone.
    const versions = await history(store, "db");
    assert.deepEqual(versions.map((v) => [v.op, v.redacted === undefined]), [
      ["update", true],
      ["update", true],
      ["create", false],
    ]);
    await assert.rejects(readVersion(store, "db", leaked.revision), (e: Error) => {
      assert.ok(e instanceof NotFoundError, String(e));
      assert.match(e.message, /was redacted at .* by operator \("a password"\)/);
      return true;
    });
    await assert.rejects(restoreVersion(store, "db", leaked.revision), NotFoundError);
    // check verifies the chain from the kept digest, and says what was redacted.
    const notes = await clean(store);
    assert.ok(
      notes.some((n) => /1 versions are redacted/.test(n) && n.includes('"a password"')),
      notes.join("\n"),
    );
    assert.deepEqual((await checkAnchor(store, anchor)).problems, []);
    // Later writes chain on as ever.
    await update(store, "db", "Database", "password: rotated");
    await clean(store);
    assert.equal((await store.read("db")).content, "password: rotated");
  });

  test("redact: the memory's newest version, a delete, an unknown or malformed revision, a second redaction and a bad reason are refused", async (f) => {
    const { store } = f;
    await store.create("k", "about k", "v1");
    await update(store, "k", "about k", "v2");
    const [head, first] = await history(store, "k");
    const refused = async (
      p: Promise<unknown>,
      type: new (...a: never[]) => Error,
      message: RegExp,
    ) =>
      await assert.rejects(p, (e: Error) => {
        assert.ok(e instanceof type, `${type.name}: ${e}`);
        assert.match(e.message, message);
        return true;
      });
    await refused(
      redactVersion(store, "k", head!.revision, { reason: "r" }),
      ConfigError,
      /it is what the memory holds now; update or delete the memory first/,
    );
    await refused(
      redactVersion(store, "k", "999999", { reason: "r" }),
      NotFoundError,
      /it is not kept \(never written, or pruned\)/,
    );
    await refused(
      redactVersion(store, "k", "x1", { reason: "r" }),
      NotFoundError,
      /a revision is a positive whole number/,
    );
    for (const reason of [undefined, "", "a\nb", "x".repeat(201), 7]) {
      await refused(
        redactVersion(store, "k", first!.revision, { reason } as never),
        ConfigError,
        /option "reason" must say why, in one line of 1 to 200 characters/,
      );
    }
    await refused(
      redactVersion(readOnlyStore(store), "k", first!.revision, { reason: "r" }),
      ReadOnlyError,
      /read-only/,
    );
    assert.equal((await history(store, "k"))[1]!.redacted, undefined, "nothing was redacted");
    await redactVersion(store, "k", first!.revision, { reason: "r" });
    await refused(
      redactVersion(store, "k", first!.revision, { reason: "r" }),
      NotFoundError,
      /redacted already/,
    );
    assert.equal(await store.delete("k"), true);
    const [del] = await history(store, "k");
    await refused(
      redactVersion(store, "k", del!.revision, { reason: "r" }),
      ConfigError,
      /a delete, which holds no description or content/,
    );
    // With the memory deleted, its last content version may go.
    await redactVersion(store, "k", head!.revision, { reason: "r" });
    await clean(store);
  });

  test("purge: a key is deleted, every version's content is gone, and its held writes with it", async (f) => {
    const store = f.reopen === undefined ? f.store : await f.reopen({ review: "tainted" });
    await store.create("pii", "Personal MARKER-PII-D", "address MARKER-PII-B1");
    await update(store, "pii", "Personal MARKER-PII-D2", "address MARKER-PII-B2");
    await store.create("kept", "Another memory", "stays");
    if (f.reopen !== undefined) {
      const bad = new Scope({ tainted: true });
      await store.read("pii", { scope: bad });
      await store.update("pii", "Personal", "address MARKER-PII-HELD", { scope: bad });
      await store.create("pii.note", "held", "MARKER-OTHER", { scope: bad });
      await store.create("kept.held", "held", "MARKER-KEPT-HELD", { scope: bad });
      const [, , keptHeld] = await proposals(store);
      await approveProposal(store, keptHeld!.id);
    }
    assert.ok((await f.rawHits!("MARKER-PII")).length > 0);
    const result = await purgeKey(store, "pii", { reason: "erasure request", scope: OPERATOR });
    assert.equal(result.deleted, true);
    assert.equal(result.redacted.length, 2);
    assert.equal(result.proposals, f.reopen === undefined ? 0 : 1);
    await assert.rejects(store.read("pii"), NotFoundError);
    const versions = await history(store, "pii");
    assert.deepEqual(versions.map((v) => [v.op, v.via, v.redacted?.reason]), [
      ["delete", "purge", undefined],
      ["update", "api", "erasure request"],
      ["create", "api", "erasure request"],
    ]);
    assert.equal(versions[0]!.actor, "operator");
    assert.deepEqual(await f.rawHits!("MARKER-PII-"), []);
    // A purge is of one key: another key's held write is still there.
    if (f.reopen !== undefined) assert.ok((await f.rawHits!("MARKER-OTHER")).length > 0);
    assert.equal((await store.read("kept")).content, "stays");
    await clean(store);
    // Purging again finds nothing left to remove; a key never written is no key to purge.
    const again = await purgeKey(store, "pii", { reason: "again" });
    assert.deepEqual([again.deleted, again.redacted], [false, []]);
    await assert.rejects(purgeKey(store, "never", { reason: "r" }), NotFoundError);
    await assert.rejects(purgeKey(readOnlyStore(store), "kept", { reason: "r" }), ReadOnlyError);
    await assert.rejects(purgeKey(store, "kept", {} as never), ConfigError);
    assert.equal((await store.read("kept")).content, "stays");
  });
}
