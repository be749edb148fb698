// The file backend's conformance suite, as tests/file/conformance_test.ts registers it, for Node
// and Bun: bundled against the built npm package by prepare.ts, run by runtimes_test.ts.

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openFileStore } from "../../mod.ts";
import { conformance } from "../conformance.ts";
import { finish } from "./_finish.ts";
import { fileHits } from "../_lib/file_hits.ts";

// The seed's contract: update replaces, and creates a key that holds nothing.
conformance({
  backend: "file",
  enforcesReadBeforeUpdate: false,
  open: async () => {
    const dir = await mkdtemp(join(tmpdir(), "agentmem-conf-"));
    return {
      store: await openFileStore({ dir }),
      peer: () => openFileStore({ dir }),
      reopen: (more: object) => openFileStore({ dir, ...more }),
      rawHits: (marker: string | Uint8Array) => fileHits(dir, marker),
      plant: (key: string, bytes: Uint8Array) => writeFile(join(dir, `${key}.md`), bytes),
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  },
});

// With revision checks on, the same rules as jetstream.
conformance({
  backend: "file",
  label: "file+readBeforeUpdate",
  enforcesReadBeforeUpdate: true,
  open: async () => {
    const dir = await mkdtemp(join(tmpdir(), "agentmem-conf-rbu-"));
    return {
      store: await openFileStore({ dir, readBeforeUpdate: true }),
      peer: () => openFileStore({ dir, readBeforeUpdate: true }),
      reopen: (more: object) => openFileStore({ dir, readBeforeUpdate: true, ...more }),
      rawHits: (marker: string | Uint8Array) => fileHits(dir, marker),
      plant: (key: string, bytes: Uint8Array) => writeFile(join(dir, `${key}.md`), bytes),
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  },
});

await finish();
