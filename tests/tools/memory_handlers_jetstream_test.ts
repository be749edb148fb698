// Claude's memory tool over a jetstream store: two runs on two connections editing one file at
// once lose no edit, because each edit is applied to the current text and written with the
// bucket's revision check, retried when the other run wrote first.

import assert from "node:assert/strict";
import { anthropicMemoryHandlers, Scope } from "../../mod.ts";
import { countingStale, renameRaces } from "./_helpers.ts";
import { natsFixture } from "../_lib/jetstream_fixture.ts";
import { needsNats } from "../_lib/nats_server.ts";

const EDITS = 20;

// With readBeforeUpdate off too: the handlers ask for a revision-checked write whatever the
// store's default.
for (const readBeforeUpdate of [true, false]) {
  Deno.test({
    name:
      `anthropicMemoryHandlers() on jetstream (readBeforeUpdate ${readBeforeUpdate}): two connections x 20 concurrent edits, all 40 land`,
    ...needsNats(),
    fn: async () => {
      await using nats = await natsFixture();
      const a = countingStale(await nats.open({ readBeforeUpdate }));
      const b = countingStale(await nats.open({ readBeforeUpdate }));
      const runA = anthropicMemoryHandlers(a.store, { scope: new Scope() });
      const runB = anthropicMemoryHandlers(b.store, { scope: new Scope() });
      await runA.create({
        command: "create",
        path: "/memories/log.md",
        file_text: "# Shared log\nend",
      });
      // Each run alternates inserts after the heading with str_replace edits of the last line, so
      // both kinds of edit race the other run's.
      const edits = (name: string, run: typeof runA) => async () => {
        for (let i = 0; i < EDITS; i++) {
          if (i % 2 === 0) {
            await run.insert({
              command: "insert",
              path: "/memories/log.md",
              insert_line: 1,
              insert_text: `${name}-${i}\n`,
            });
          } else {
            // The last line is "end" and every replacement so far; each adds its mark.
            await run.str_replace({
              command: "str_replace",
              path: "/memories/log.md",
              old_str: "end",
              new_str: `end ${name}-${i}`,
            });
          }
        }
      };
      await Promise.all([edits("A", runA)(), edits("B", runB)()]);
      const { content } = await a.store.read("log");
      const lines = content.split("\n");
      for (const name of ["A", "B"]) {
        for (let i = 0; i < EDITS; i++) {
          const mark = `${name}-${i}`;
          if (i % 2 === 0) assert.ok(lines.includes(mark), `insert ${mark} was lost:\n${content}`);
          else {assert.ok(
              lines.at(-1)!.split(" ").includes(mark),
              `edit ${mark} was lost:\n${content}`,
            );}
        }
      }
      assert.equal(lines[0], "# Shared log");
      assert.equal(lines.length, 2 + EDITS);
      console.log(`stale retries: ${a.stale()} + ${b.stale()}`);
    },
  });
}

for (const readBeforeUpdate of [true, false]) {
  Deno.test({
    name:
      `anthropicMemoryHandlers() on jetstream (readBeforeUpdate ${readBeforeUpdate}): a rename racing a str_replace loses nothing`,
    ...needsNats(),
    fn: async () => {
      await using nats = await natsFixture();
      const stores = [
        await nats.open({ readBeforeUpdate }),
        await nats.open({ readBeforeUpdate }),
      ] as const;
      const { bothOk, renameStale } = await renameRaces(stores, 30);
      console.log(`both succeeded in ${bothOk} of 30; rename stale in ${renameStale}`);
    },
  });
}
