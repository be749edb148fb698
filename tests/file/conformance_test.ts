import { openFileStore } from "../../mod.ts";
import { conformance } from "../conformance.ts";

// The seed's contract: update replaces, and creates a key that holds nothing.
conformance({
  backend: "file",
  enforcesReadBeforeUpdate: false,
  open: async () => {
    const dir = await Deno.makeTempDir({ prefix: "agentmem-conf-" });
    return {
      store: await openFileStore({ dir }),
      peer: () => openFileStore({ dir }),
      plant: (key, bytes) => Deno.writeFile(`${dir}/${key}.md`, bytes),
      cleanup: () => Deno.remove(dir, { recursive: true }),
    };
  },
});

// With revision checks on, the same rules as jetstream.
conformance({
  backend: "file",
  label: "file+readBeforeUpdate",
  enforcesReadBeforeUpdate: true,
  open: async () => {
    const dir = await Deno.makeTempDir({ prefix: "agentmem-conf-rbu-" });
    return {
      store: await openFileStore({ dir, readBeforeUpdate: true }),
      peer: () => openFileStore({ dir, readBeforeUpdate: true }),
      plant: (key, bytes) => Deno.writeFile(`${dir}/${key}.md`, bytes),
      cleanup: () => Deno.remove(dir, { recursive: true }),
    };
  },
});
