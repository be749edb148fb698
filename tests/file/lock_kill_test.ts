// The file backend's per-key lock under writers killed at any point: a lock is published whole
// (its holder's token is in it from the instant the name exists), so a holder SIGKILLed anywhere
// is seen dead at once by the next writer, on the host and from another pid namespace.

import assert from "node:assert/strict";
import { openFileStore, Scope, type Store } from "../../mod.ts";
import { denoRunner, startGroup, type Where } from "../_lib/lock_fleet.ts";
import type { Child } from "../_lib/spawn.ts";
import { fileTest } from "./_fixture.ts";
import { assertTools, needs } from "../_lib/needs.ts";

// The shape of a published lock: a token, a nonce and (since locks are linked whole) a kind.
const WHOLE = /^\d+-\d+-[0-9a-f]{8} [0-9a-f]{12}( [kp])?$/;

fileTest("a lock is never seen empty or half-written while two processes take it", async (dir) => {
  const store = await openFileStore({ dir, readBeforeUpdate: true });
  await store.create("counter", "counter", "0");
  const job = { job: "hammer", dir, key: "counter" } as const;
  const procs = startGroup("host", [[denoRunner(), job], [denoRunner(), job]]);
  try {
    await Promise.all(procs.map((p) => p.waitFor("first")));
    const seen = new Map<string, number>();
    let reads = 0;
    for (const until = Date.now() + 3000; Date.now() < until;) {
      let text: string;
      try {
        text = Deno.readTextFileSync(`${dir}/.counter.lock`);
      } catch {
        continue; // not held at this instant
      }
      reads++;
      if (!WHOLE.test(text)) {
        seen.set(JSON.stringify(text), (seen.get(JSON.stringify(text)) ?? 0) + 1);
      }
      if (reads % 50 === 0) await new Promise((r) => setTimeout(r, 0));
    }
    assert.ok(reads > 100, `the lock was seen held ${reads} times`);
    assert.deepEqual([...seen], [], `lock contents seen that are not whole locks (of ${reads})`);
  } finally {
    for (const p of procs) await p[Symbol.asyncDispose]();
  }
});

/**
 * Kills a hammering writer (started `where`) at random moments until `want` kills left its lock
 * behind; after every kill the next revision-checked update must go through at once.
 */
async function killHolders(dir: string, where: Where, want: number): Promise<void> {
  const store = await openFileStore({ dir, readBeforeUpdate: true });
  await store.create("counter", "counter", "0");
  let leftBehind = 0;
  for (let kill = 0; leftBehind < want; kill++) {
    assert.ok(kill < 200, `only ${leftBehind} of ${kill} kills left a lock behind`);
    const [proc] = startGroup(where, [[denoRunner(), { job: "hammer", dir, key: "counter" }]]);
    await killSoon(proc!);
    const left = await Deno.lstat(`${dir}/.counter.lock`).then(() => true, () => false);
    if (left) leftBehind++;
    const started = performance.now();
    await updateOnce(store);
    const ms = performance.now() - started;
    assert.ok(ms < 1500, `after kill ${kill} (lock left: ${left}) the next update took ${ms} ms`);
  }
}

async function killSoon(proc: Child): Promise<void> {
  try {
    await proc.waitFor("first");
    await new Promise((r) => setTimeout(r, Math.random() * 30));
  } finally {
    await proc[Symbol.asyncDispose]();
  }
}

async function updateOnce(store: Store): Promise<void> {
  const scope = new Scope();
  const { content } = await store.read("counter", { scope });
  await store.update("counter", "counter", `${content}+`, {
    scope,
    signal: AbortSignal.timeout(3000),
  });
}

fileTest(
  "a writer SIGKILLed while it holds the lock is seen dead by the next writer at once",
  (dir) => killHolders(dir, "host", 5),
);

Deno.test({
  name:
    "a writer SIGKILLed in a container while it holds the lock is seen dead from the host at once",
  ...needs("the pid namespace tests", "root", "unshare"),
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    assertTools("root", "unshare");
    const made = await Deno.makeTempDir({ prefix: "agentmem-kill-" });
    try {
      await killHolders(await Deno.realPath(made), "container", 3);
    } finally {
      await Deno.remove(made, { recursive: true });
    }
  },
});
