// One agent of the cross-process edit test: opens a default file store (readBeforeUpdate off) and
// makes its str_replace edits through Claude's memory tool handlers, after a start time shared
// with the other agent so the two overlap. Prints how many of its writes met a newer revision.
//
// deno run ... _edit_worker.ts <dir> <agent> <edits> <startAtMs>

import {
  anthropicMemoryHandlers,
  openFileStore,
  Scope,
  StaleError,
  type Store,
} from "../../mod.ts";

const [dir, agent, edits, startAt] = Deno.args as [string, string, string, string];
const store = await openFileStore({ dir });
let stale = 0;
const counted: Store = {
  info: () => store.info(),
  list: (o) => store.list(o),
  read: (k, o) => store.read(k, o),
  create: (k, d, c, o) => store.create(k, d, c, o),
  delete: (k, o) => store.delete(k, o),
  update: (k, d, c, o) =>
    store.update(k, d, c, o).catch((e) => {
      if (e instanceof StaleError) stale++;
      throw e;
    }),
};
const memory = anthropicMemoryHandlers(counted, { scope: new Scope() });
while (Date.now() < Number(startAt)) await new Promise((r) => setTimeout(r, 2));
for (let i = 0; i < Number(edits); i++) {
  await memory.str_replace({
    command: "str_replace",
    path: "/memories/shared.md",
    old_str: `${agent}-${i}: todo`,
    new_str: `${agent}-${i}: done`,
  });
}
console.log(JSON.stringify({ stale }));
