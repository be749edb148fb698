import { type FileStoreOptions, openFileStore } from "../../mod.ts";
import { conformance, type Fixture } from "../conformance.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { fileHits } from "../_lib/raw_hits.ts";

// A fresh directory per case, opened with `options`; the peer is a second handle on it.
function opener(prefix: string, options: Omit<FileStoreOptions, "dir"> = {}) {
  return async (): Promise<Fixture> => {
    const tmp = await tempDir(prefix);
    const dir = tmp.path;
    return {
      store: await openFileStore({ dir, ...options }),
      peer: () => openFileStore({ dir, ...options }),
      reopen: (more) => openFileStore({ dir, ...options, ...more }),
      rawHits: (marker) => fileHits(dir, marker),
      plant: (key, bytes) => Deno.writeFile(`${dir}/${key}.md`, bytes),
      cleanup: () => tmp[Symbol.asyncDispose](),
    };
  };
}

// The seed's contract: update replaces, and creates a key that holds nothing.
conformance({
  backend: "file",
  enforcesReadBeforeUpdate: false,
  open: opener("agentmem-conf-"),
});

// With revision checks on, the same rules as jetstream.
conformance({
  backend: "file",
  label: "file+readBeforeUpdate",
  enforcesReadBeforeUpdate: true,
  open: opener("agentmem-conf-rbu-", { readBeforeUpdate: true }),
});
