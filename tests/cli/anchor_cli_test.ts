// `agentmem check --save-anchor FILE` and `--anchor FILE` on the file backend, run as an operator
// runs them: the anchor's SHA-256 printed, a clean store extending its anchor, a key removed whole
// by hand found only through the anchor, and an anchor file changed since it was saved refused.

import assert from "node:assert/strict";
import { openFileStore, Scope } from "../../mod.ts";
import { cli } from "../_lib/cli.ts";
import { tempDir } from "../_lib/temp_dir.ts";

Deno.test("agentmem check --anchor sees a key removed whole, which the chains alone cannot", async () => {
  await using t = await tempDir();
  const dir = `${t.path}/store`;
  const store = await openFileStore({ dir });
  const s = new Scope({ run: "run-1" });
  await store.create("kept", "about kept", "1", { scope: s });
  await store.create("doomed", "about doomed", "1", { scope: s });
  const anchorFile = `${t.path}/anchor.json`;
  const saved = await cli(t.path, ["check", "--dir", dir, "--save-anchor", anchorFile]);
  assert.equal(saved.code, 0, saved.stderr);
  const sha = /anchor saved: 2 keys, sha256 ([0-9a-f]{64})/.exec(saved.stdout)?.[1];
  assert.ok(sha, saved.stdout);
  assert.equal((await Deno.stat(anchorFile)).mode! & 0o777, 0o600);

  // More writes by the library: the store still extends its anchor.
  await store.read("kept", { scope: s });
  await store.update("kept", "about kept", "2", { scope: s });
  const clean = await cli(t.path, ["check", "--dir", dir, "--anchor", anchorFile]);
  assert.equal(clean.code, 0, clean.stdout);
  assert.match(clean.stdout, /^anchor: 2 keys checked, 0 problems$/m);

  // A key removed whole by hand (memory and history): only the anchor can tell.
  await Deno.remove(`${dir}/doomed.md`);
  await Deno.remove(`${dir}/.history/doomed`, { recursive: true });
  const plain = await cli(t.path, ["check", "--dir", dir]);
  assert.equal(plain.code, 0, "without the anchor the chains alone cannot see a key removed whole");
  const caught = await cli(t.path, [
    "check",
    "--dir",
    dir,
    "--anchor",
    anchorFile,
    "--anchor-sha256",
    sha,
    "--json",
  ]);
  assert.equal(caught.code, 1, caught.stderr);
  const report = JSON.parse(caught.stdout);
  assert.deepEqual(
    report.anchor.problems.map((p: { key: string; problem: string }) => [p.key, p.problem]),
    [["doomed", "removed"]],
  );

  // An anchor file changed since it was saved is refused, and touches nothing.
  const text = await Deno.readTextFile(anchorFile);
  await Deno.writeTextFile(anchorFile, text.replace(/"revision": "\d+"/, '"revision": "1"') + " ");
  const changed = await cli(t.path, [
    "check",
    "--dir",
    dir,
    "--anchor",
    anchorFile,
    "--anchor-sha256",
    sha,
  ]);
  assert.equal(changed.code, 1);
  assert.match(changed.stderr, /does not have the SHA-256 given by --anchor-sha256/);
  const usage = await cli(t.path, ["check", "--dir", dir, "--anchor-sha256", sha]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--anchor-sha256 goes with --anchor/);
});
