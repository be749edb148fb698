// The OpenAI Responses loop (examples/openai_responses.ts and the snippet in docs/tools.md) builds its
// instructions once per run: a write in one turn must not change the next turn's instructions,
// which would defeat the prompt cache and turn the start-of-run index into a moving one.

import assert from "node:assert/strict";
import OpenAI from "openai";
import { chat } from "../../examples/openai_responses.ts";
import { FakeStore } from "../_lib/fake_store.ts";
import { openaiResponse as response, scriptedFetch } from "../_lib/sdk_fetch.ts";

const write = (callId: string, key: string) => ({
  type: "function_call",
  id: `fc_${callId}`,
  call_id: callId,
  name: "memory_write",
  arguments: JSON.stringify({ key, description: `About ${key}`, content: "x" }),
  status: "completed",
});

Deno.test("the Responses example sends the same instructions on every turn, though memory changed", async () => {
  const store = new FakeStore();
  store.seed("user.name", "What the user wants to be called", "Sam");
  const script = scriptedFetch([
    response([write("a", "first.key")]),
    response([write("b", "second.key")]),
    response([{
      type: "message",
      id: "msg_1",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "Done.", annotations: [] }],
    }]),
  ]);
  const client = new OpenAI({ apiKey: "k", fetch: script.fetch, maxRetries: 0 });
  assert.equal(await chat(client, store, "Remember two things."), "Done.");
  assert.equal(store.entries.size, 3);
  const sent = script.requests.map((r) => (r.body as { instructions: string }).instructions);
  assert.equal(sent.length, 3);
  assert.equal(new Set(sent).size, 1, "the instructions changed between turns");
  assert.doesNotMatch(sent[2]!, /first\.key/);
});

Deno.test("the docs' Responses snippet builds the system note once, before its loop", async () => {
  const page = await Deno.readTextFile(new URL("../../docs/tools.md", import.meta.url));
  const snippet = /\*\*OpenAI Responses\*\*[\s\S]*?```ts\n([\s\S]*?)```/.exec(page)?.[1];
  assert.ok(snippet, "docs/tools.md has no OpenAI Responses snippet");
  const loop = snippet.indexOf("for (");
  assert.ok(loop > 0);
  assert.ok(
    snippet.indexOf("memorySystemNote(") > 0 && snippet.indexOf("memorySystemNote(") < loop,
  );
  assert.equal(snippet.slice(loop).includes("memorySystemNote("), false);
});
