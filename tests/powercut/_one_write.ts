// One write in a process of its own, for tests that cut the power in the middle of it: takes
// `{ dir, key, version }` as its JSON argument, prints `{"t":"begin"}`, updates `key` to
// entryFor(key, version) in a durable file store over `dir`, then prints `{"t":"done"}`.

import { openFileStore } from "../../mod.ts";
import { entryFor } from "./_content.ts";

const { dir, key, version } = JSON.parse(Deno.args[0] ?? "") as {
  dir: string;
  key: string;
  version: number;
};
const store = await openFileStore({ dir });
const { description, content } = entryFor(key, version);
console.log(JSON.stringify({ t: "begin" }));
await store.update(key, description, content);
console.log(JSON.stringify({ t: "done" }));
