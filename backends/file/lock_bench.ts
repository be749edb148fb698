// What the per-key lock costs (not part of the package): `deno bench --config tests/deno.json
// --allow-all backends/file/lock_bench.ts`. Each group has a floor measured in the same run, so
// the numbers read as ratios on a busy machine: taking and releasing an uncontended lock against
// creating and removing one small file, and a read-then-update with the lock (revision checks on)
// against one without.

import { openFileStore, Scope } from "../../mod.ts";
import { close, createWith, removeQuietly } from "./fs.ts";
import { lockPath, withLock } from "./lock.ts";

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
    close(createWith(`${dir}/.floor`, BYTES, 0o600));
    removeQuietly(`${dir}/.floor`);
  },
});

Deno.bench({
  name: "withLock() uncontended, around nothing",
  group: "lock",
  fn: async () => {
    await withLock(path, "k", undefined, noop);
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
