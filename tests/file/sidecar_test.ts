// The file backend's sidecar: records by key in a hidden file of the memory directory, replaced
// whole; a damaged (cut) file reads as the records before the damage and the next update writes
// it whole again; a read-only view reads it and offers no update.

import assert from "node:assert/strict";
import { openFileStore, openStore } from "../../mod.ts";
import { sidecarOf } from "../../store/sidecar.ts";
import { tempDir } from "../_lib/temp_dir.ts";

const bytes = (...b: number[]) => new Uint8Array(b);

Deno.test("[file] the sidecar keeps records by key, survives a cut file, and is read-only in a read-only view", async () => {
  await using dir = await tempDir();
  const store = await openFileStore({ dir: dir.path });
  const sidecar = sidecarOf(store)!;
  assert.deepEqual(await sidecar.read("vec-a"), new Map());
  await sidecar.update!("vec-a", {
    put: new Map([["k1", bytes(1)], ["k2", bytes(2, 2)]]),
    remove: [],
  });
  await sidecar.update!("vec-a", { put: new Map([["k3", bytes(3)]]), remove: ["k1"] });
  assert.deepEqual(await sidecar.read("vec-a"), new Map([["k2", bytes(2, 2)], ["k3", bytes(3)]]));
  assert.deepEqual(await sidecar.read("vec-b"), new Map());
  // Cut in the middle of the last record: the first still reads.
  const file = `${dir.path}/.sidecar-vec-a.bin`;
  const whole = Deno.readFileSync(file);
  Deno.writeFileSync(file, whole.subarray(0, whole.length - 1));
  assert.deepEqual(await sidecar.read("vec-a"), new Map([["k2", bytes(2, 2)]]));
  await sidecar.update!("vec-a", { put: new Map([["k3", bytes(3)]]), remove: [] });
  assert.deepEqual(Deno.readFileSync(file), whole);
  assert.equal((Deno.statSync(file).mode ?? 0) & 0o777, 0o600);
  // A read-only view reads, and has no update.
  const view = sidecarOf(
    await openStore({ backend: "file", options: { dir: dir.path }, readOnly: true }),
  )!;
  assert.equal(view.update, undefined);
  assert.equal((await view.read("vec-a")).size, 2);
  // None of it is a memory.
  assert.deepEqual(await store.list(), []);
});
