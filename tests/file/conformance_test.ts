import { openFileStore } from "../../mod.ts";
import { conformance } from "../conformance.ts";
import { tempDir } from "../_lib/temp_dir.ts";

// The seed's contract: update replaces, and creates a key that holds nothing.
conformance({
  backend: "file",
  enforcesReadBeforeUpdate: false,
  open: async () => {
    const tmp = await tempDir("agentmem-conf-");
    const dir = tmp.path;
    return {
      store: await openFileStore({ dir }),
      peer: () => openFileStore({ dir }),
      plant: (key, bytes) => Deno.writeFile(`${dir}/${key}.md`, bytes),
      cleanup: () => tmp[Symbol.asyncDispose](),
    };
  },
});

// With revision checks on, the same rules as jetstream.
conformance({
  backend: "file",
  label: "file+readBeforeUpdate",
  enforcesReadBeforeUpdate: true,
  open: async () => {
    const tmp = await tempDir("agentmem-conf-rbu-");
    const dir = tmp.path;
    return {
      store: await openFileStore({ dir, readBeforeUpdate: true }),
      peer: () => openFileStore({ dir, readBeforeUpdate: true }),
      plant: (key, bytes) => Deno.writeFile(`${dir}/${key}.md`, bytes),
      cleanup: () => tmp[Symbol.asyncDispose](),
    };
  },
});
