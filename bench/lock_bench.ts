// What the file backend's per-key lock costs: `deno bench --config tests/deno.json --allow-all
// bench/lock_bench.ts`. Each group has a floor measured in the same run, so
// the numbers read as ratios on a busy machine: taking and releasing an uncontended lock against
// creating and removing one small file, and a read-then-update with the lock (revision checks on)
// against one without.

import { closeSync, constants, fchmodSync, openSync, unlinkSync, writeSync } from "node:fs";
import { openFileStore, Scope } from "../mod.ts";
import { lockPath, withLock } from "../backends/file/testing.ts";

const dir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "agentmem-lock-bench-" }));
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
const BYTES = new TextEncoder().encode("12345-678901234-0123abcd 0123456789ab k");
const path = lockPath(dir, "k");
const noop = () => 0;

Deno.bench({
  name: "create, write and remove one small file",
  group: "lock",
  baseline: true,
  fn: () => {
    // As the lock makes its file: exclusive, not following a symlink, its mode set, then written.
    const { O_CREAT, O_EXCL, O_NOFOLLOW, O_WRONLY } = constants;
    const fd = openSync(`${dir}/.floor`, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY, 0o600);
    fchmodSync(fd, 0o600);
    writeSync(fd, BYTES);
    closeSync(fd);
    unlinkSync(`${dir}/.floor`);
  },
});

Deno.bench({
  name: "withLock() uncontended, around nothing",
  group: "lock",
  fn: async () => {
    await withLock({ path, key: "k", signal: undefined }, noop);
  },
});

async function updater(readBeforeUpdate: boolean) {
  const store = await openFileStore({
    dir: `${dir}/${readBeforeUpdate}`,
    durable: false,
    history: false,
    readBeforeUpdate,
  });
  await store.create("k", "d", "0");
  let i = 0;
  // A run's step: read the key, then write it.
  return async () => {
    const scope = new Scope();
    await store.read("k", { scope });
    await store.update("k", "d", String(++i), { scope });
  };
}

const plain = await updater(false);
const checked = await updater(true);

Deno.bench({
  name: "read(), update() without revision checks (no lock)",
  group: "update",
  baseline: true,
  fn: plain,
});

Deno.bench({
  name: "read(), update() with revision checks (under the key's lock)",
  group: "update",
  fn: checked,
});
