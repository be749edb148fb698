// One search in a process of its own (hybrid_search_test.ts): opens the store, runs one hybrid
// memory_search with the test embedder, and prints how many texts it embedded and what it found.
//
// deno run ... _search_worker.ts '{"dir": ...}' | '{"servers": ..., "bucket": ...}' <query>

import { memoryTools, openFileStore, openJetStreamStore, runTool } from "../../mod.ts";
import { natsConnect } from "../_lib/nats_server.ts";
import { TestEmbedder } from "../_lib/embedder.ts";

const at = JSON.parse(Deno.args[0]!) as { dir: string } | { servers: string; bucket: string };
const nc = "servers" in at ? await natsConnect(at.servers) : undefined;
const store = "dir" in at
  ? await openFileStore({ dir: at.dir })
  : await openJetStreamStore({ bucket: at.bucket, prefix: "run" }, { nc: nc! });
const embedder = new TestEmbedder();
const tools = memoryTools(store, { search: { embed: embedder.embed } });
const r = await runTool(tools, "memory_search", { query: Deno.args[1]! });
console.log(JSON.stringify({ t: "done", texts: embedder.texts, content: r.content }));
await nc?.close();
