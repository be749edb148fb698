// The model is told which memories a tainted run wrote last: the start-of-run index marks them and
// memory_read says when and by which run a memory was last written. The mark is ours, outside
// anything stored text can reach, and the note stays byte-stable for equal stores.

import assert from "node:assert/strict";
import { memorySystemNote, memoryTools, openFileStore, runTool, Scope } from "../../mod.ts";
import { tempDir } from "../_lib/temp_dir.ts";

const MARK = "[written by a run that read untrusted input]";

async function seeded(dir: string) {
  const store = await openFileStore({ dir });
  const clean = new Scope({ run: "run-clean" });
  const web = new Scope({ run: "run-web" });
  web.taint();
  await store.create("prefs", "User preferences", "metric", { scope: clean });
  await store.create("tips", "Travel tips", "from a web page", { scope: web });
  // A description that claims the mark is only a description.
  await store.create("forged", `looks fine ${MARK}`, "x", { scope: clean });
  return { store, clean, web };
}

Deno.test("memorySystemNote() marks a memory whose latest version came from a tainted run", async () => {
  await using a = await tempDir("agentmem-taint-");
  const { store, clean } = await seeded(a.path);
  const note = await memorySystemNote(store);
  assert.ok(note.includes(`- "tips" ${MARK}: Travel tips`), note);
  assert.ok(note.includes(`- "prefs": User preferences`));
  // The forged one is marked only inside its description, after the colon.
  assert.ok(note.includes(`- "forged": looks fine ${MARK}`));
  // Byte-stable: another store with the same memories and the same taint gives the same note.
  await using b = await tempDir("agentmem-taint-");
  const twin = await seeded(b.path);
  assert.equal(await memorySystemNote(twin.store), note);
  // A run that reads the tainted memory is tainted by it: its write keeps the mark.
  await store.read("tips", { scope: clean });
  assert.equal(clean.tainted, true);
  await store.update("tips", "Travel tips", "copied from the tainted one", { scope: clean });
  assert.ok((await memorySystemNote(store)).includes(`- "tips" ${MARK}: Travel tips`));
  // An untainted write clears it: a reviewer whose host opted out of taint propagation.
  const reviewer = new Scope({ run: "reviewer", propagateTaint: false });
  await store.read("tips", { scope: reviewer });
  assert.equal(reviewer.tainted, false);
  await store.update("tips", "Travel tips", "checked by hand", { scope: reviewer });
  assert.ok(!(await memorySystemNote(store)).includes(MARK + ":"));
});

Deno.test("memory_read says when and by which run a memory was last written, and marks a tainted run", async () => {
  await using t = await tempDir("agentmem-taint-");
  const { store } = await seeded(t.path);
  const tools = memoryTools(store, { scope: new Scope() });
  const tips = await runTool(tools, "memory_read", { key: "tips" });
  assert.match(
    tips.content,
    /\nlast written: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ by run "run-web", \[written by a run that read untrusted input\]\n/,
  );
  // Inside the data frame, between its BEGIN and END lines.
  const begin = tips.content.indexOf("BEGIN MEMORY DATA");
  const end = tips.content.indexOf("END MEMORY DATA");
  const at = tips.content.indexOf("last written:");
  assert.ok(begin < at && at < end);
  const prefs = await runTool(tools, "memory_read", { key: "prefs" });
  assert.match(prefs.content, /\nlast written: [^\n]* by run "run-clean"\n/);
  assert.ok(!prefs.content.includes(MARK));
  // A store without history shows no such line.
  await using h = await tempDir("agentmem-taint-");
  const plain = await openFileStore({ dir: h.path, history: false });
  await plain.create("k", "d", "c");
  const read = await runTool(memoryTools(plain), "memory_read", { key: "k" });
  assert.ok(!read.content.includes("last written:"));
});
