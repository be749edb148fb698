import { openFileStore } from "../mod.ts";
import { conformance } from "./conformance.ts";

conformance({
  backend: "file",
  enforcesReadBeforeUpdate: false,
  open: async () => {
    const dir = await Deno.makeTempDir({ prefix: "agentmem-conf-" });
    return {
      store: await openFileStore({ dir }),
      peer: () => openFileStore({ dir }),
      cleanup: () => Deno.remove(dir, { recursive: true }),
    };
  },
});
