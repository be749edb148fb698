// Every command a CLI message prints as a fix runs as printed: it carries the options that chose
// the store (never a credential), and running it does what the message says.

import assert from "node:assert/strict";
import { Kvm } from "@nats-io/kv";
import { agentmemShell } from "../_lib/agentmem_shell.ts";
import { natsConnect, needsNats, startNatsServer } from "../_lib/nats_server.ts";
import { tempDir } from "../_lib/temp_dir.ts";

Deno.test({
  name:
    "cli a plain NATS KV bucket is refused with a bucket init that runs as printed (with --servers), or --no-history",
  ...needsNats(),
  fn: async () => {
    await using t = await tempDir();
    await using shell = await agentmemShell();
    await using server = await startNatsServer();
    const nc = await natsConnect(server.url);
    try {
      for (const bucket of ["plainkv", "other"]) await new Kvm(nc).create(bucket, { history: 1 });
      const listing = `agentmem list --servers ${server.url} --bucket plainkv`;
      const refused = await shell.run(listing, t.path);
      assert.equal(refused.code, 1, refused.stderr);
      const fix = /agentmem bucket init [^;]*/.exec(refused.stderr)?.[0];
      assert.equal(fix, `agentmem bucket init --bucket=plainkv --servers=${server.url}`);
      assert.match(
        refused.stderr,
        /or open the store with option "history": false \(--no-history\)/,
      );
      const fixed = await shell.run(fix!, t.path);
      assert.equal(fixed.code, 0, fixed.stderr);
      const listed = await shell.run(listing, t.path);
      assert.deepEqual([listed.code, listed.stdout], [
        0,
        'bucket "plainkv", prefix "": the whole bucket (the library\'s default prefix is the run\'s identity, so an agent\'s key k shows here as <identity>.k)\n(no memories)\n',
      ]);
      // The other way out: the bucket as it is, with history off.
      const off = await shell.run(
        `agentmem write k --description d --content c --servers ${server.url} --bucket other --no-history`,
        t.path,
      );
      assert.equal(off.code, 0, off.stderr);
      // Credentials in --servers are never repeated; the fix says how to give them instead.
      const secret = server.url.replace("nats://", "nats://someone:s3cret-pw@");
      const withUser = await shell.run(`agentmem list --servers ${secret} --bucket other`, t.path);
      assert.equal(withUser.code, 1);
      assert.ok(!withUser.stderr.includes("s3cret-pw"), withUser.stderr);
      assert.match(
        withUser.stderr,
        new RegExp(
          `--servers=${server.url} \\(with the credentials of your --servers URL: set NATS_USER and NATS_PASSWORD\\)`,
        ),
      );
    } finally {
      await nc.close();
    }
  },
});

Deno.test("cli the check a listing points to runs as printed, on the store that was listed", async () => {
  await using t = await tempDir();
  await using shell = await agentmemShell();
  await Deno.mkdir(`${t.path}/my store`);
  await Deno.writeTextFile(`${t.path}/my store/bad.md`, "no header");
  const listed = await shell.run("agentmem list --dir 'my store'", t.path);
  assert.equal(listed.code, 0, listed.stderr);
  const pointed = /run "(agentmem check[^"]*)"/.exec(listed.stdout)?.[1];
  assert.equal(pointed, "agentmem check --dir='my store'");
  const checked = await shell.run(pointed!, t.path);
  // It ran on that store and found the damaged entry (exit 1: a problem, not a usage error).
  assert.equal(checked.code, 1, checked.stderr);
  assert.match(checked.stdout, /"bad": damaged/);
});
