// The file backend's sidecar: records by key in a hidden file of the memory directory, replaced
// whole; a damaged (cut) file reads as the records before the damage and the next update writes
// it whole again; a read-only view reads it and offers no update; a purge leaves no copy of the
// key's records (another name of the file, a dead writer's temp file).

import assert from "node:assert/strict";
import { openFileStore, openStore, purgeKey } from "../../mod.ts";
import { sidecarOf } from "../../store/sidecar.ts";
import { fileHits } from "../_lib/raw_hits.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { isSharedLockName } from "../../backends/file/testing.ts";

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

Deno.test("[file] a purge drops the key from every space, under every name of the file, and leaves no temp file", async () => {
  await using dir = await tempDir();
  const store = await openFileStore({ dir: dir.path });
  const sidecar = sidecarOf(store)!;
  const marker = new TextEncoder().encode("MARKER-SIDECAR-PII");
  await store.create("pii", "Personal", "address");
  await store.create("kept", "Kept", "stays");
  for (const space of ["vec-a", "vec-b"]) {
    await sidecar.update!(space, {
      put: new Map([["pii", marker], ["kept", bytes(7)]]),
      remove: [],
    });
  }
  // Another name of one space's file, and a temp file a writer that died left behind.
  Deno.linkSync(`${dir.path}/.sidecar-vec-a.bin`, `${dir.path}/copy.bin`);
  Deno.writeFileSync(`${dir.path}/.sidecar-vec-b.99.abc.tmp`, marker);
  assert.equal((await fileHits(dir.path, marker)).length, 4);
  await purgeKey(store, "pii", { reason: "erasure request" });
  assert.deepEqual(await fileHits(dir.path, marker), []);
  for (const space of ["vec-a", "vec-b"]) {
    assert.deepEqual(await sidecar.read(space), new Map([["kept", bytes(7)]]));
  }
  assert.deepEqual(
    [...Deno.readDirSync(dir.path)].map((e) => e.name).filter((n) =>
      n.endsWith(".tmp") && !isSharedLockName(n)
    ),
    [],
  );
});
