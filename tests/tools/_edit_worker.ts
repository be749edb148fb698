// One agent of the cross-process edit test: opens a default file store (readBeforeUpdate off) and
// makes its str_replace edits through Claude's memory tool handlers, after a start time shared
// with the other agent so the two overlap. Prints how many of its writes met a newer revision.
//
// deno run ... _edit_worker.ts <dir> <agent> <edits> <startAtMs>

import { anthropicMemoryHandlers, openFileStore, Scope } from "../../mod.ts";
import { countingStale } from "./_helpers.ts";

const [dir, agent, edits, startAt] = Deno.args as [string, string, string, string];
const store = await openFileStore({ dir });
const counted = countingStale(store);
const memory = anthropicMemoryHandlers(counted.store, { scope: new Scope() });
while (Date.now() < Number(startAt)) await new Promise((r) => setTimeout(r, 2));
for (let i = 0; i < Number(edits); i++) {
  await memory.str_replace({
    command: "str_replace",
    path: "/memories/shared.md",
    old_str: `${agent}-${i}: todo`,
    new_str: `${agent}-${i}: done`,
  });
}
console.log(JSON.stringify({ stale: counted.stale() }));
