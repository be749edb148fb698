// One side of the cross-process folder race (claude_memory_folders_test.ts), through Claude's
// memory-tool handlers on a store of its own: the "mover" renames files across folders and then a
// whole folder; the "editor" edits the same files at the same moments. Each trial starts at a
// shared clock slot, so the two really race. Prints {"t":"done","ok":[...]} with each step's
// outcome, in order.
//
// deno run ... _folder_race_worker.ts '<job JSON>'

import { anthropicMemoryHandlers, openFileStore, openJetStreamStore, Scope } from "../../mod.ts";
import { natsConnect } from "../_lib/nats_server.ts";

export interface RaceJob {
  readonly role: "mover" | "editor";
  readonly store: { readonly dir: string } | { readonly servers: string; readonly bucket: string };
  readonly trials: number;
  readonly files: number;
  readonly startAt: number;
  readonly slotMs: number;
}

const job = JSON.parse(Deno.args[0]!) as RaceJob;
const nc = "servers" in job.store ? await natsConnect(job.store.servers) : undefined;
const store = "dir" in job.store
  ? await openFileStore({ dir: job.store.dir })
  : await openJetStreamStore({ bucket: job.store.bucket, prefix: "run" }, { nc: nc! });
const memory = anthropicMemoryHandlers(store, { scope: new Scope({ run: job.role }) });
const at = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms - Date.now())));
const outcome = (p: Promise<unknown>) => p.then(() => true, () => false);

const ok: boolean[] = [];
for (let i = 0; i < job.trials; i++) {
  await at(job.startAt + i * job.slotMs + (job.role === "editor" ? i % 5 : 0));
  ok.push(
    await outcome(
      job.role === "mover"
        ? memory.rename({
          command: "rename",
          old_path: `/memories/inbox/t${i}.md`,
          new_path: `/memories/done/t${i}.md`,
        })
        : memory.str_replace({
          command: "str_replace",
          path: `/memories/inbox/t${i}.md`,
          old_str: "x: 0",
          new_str: "x: 1",
        }),
    ),
  );
}
// Then the whole folder /memories/box moves while each of its files is edited.
await at(job.startAt + job.trials * job.slotMs + 50);
if (job.role === "mover") {
  ok.push(
    await outcome(
      memory.rename({
        command: "rename",
        old_path: "/memories/box",
        new_path: "/memories/old/box",
      }),
    ),
  );
} else {
  for (let f = 0; f < job.files; f++) {
    ok.push(
      await outcome(memory.str_replace({
        command: "str_replace",
        path: `/memories/box/f${f}.md`,
        old_str: "x: 0",
        new_str: "x: 1",
      })),
    );
  }
}
console.log(JSON.stringify({ t: "done", ok }));
await nc?.close();
