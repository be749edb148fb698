// The file backend's conformance suite, as tests/file_test.ts registers it, for Node and Bun:
// bundled against the built npm package by prepare.ts, run by tests/runtimes_test.ts.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openFileStore } from "../../mod.ts";
import { conformance } from "../conformance.ts";
import { finish } from "./_finish.ts";

conformance({
  backend: "file",
  enforcesReadBeforeUpdate: false,
  open: async () => {
    const dir = await mkdtemp(join(tmpdir(), "agentmem-conf-"));
    return {
      store: await openFileStore({ dir }),
      peer: () => openFileStore({ dir }),
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  },
});

await finish();
