// The peers: what a user would pick instead of this library, behind one small interface so
// bench/peers.ts runs the same workload on each (how each is driven: BENCH.md). Dev-only: nothing
// here is reachable from mod.ts. An update replaces the body this process last read; an increment
// is one read-modify-write of a counter, retried where the system reports a conflict.

import { readFile, rename, writeFile } from "node:fs/promises";
import { DatabaseSync } from "node:sqlite";
import { BetaLocalFilesystemMemoryTool } from "@anthropic-ai/sdk/tools/memory/node";
import type { NatsConnection } from "@nats-io/nats-core";
import { createStorage } from "unstorage";
import fsDriver from "unstorage/drivers/fs";
import { Scope, StaleError, type Store } from "../mod.ts";
import { DESCRIPTION, openStore } from "./_location.ts";
import type { Location } from "./_protocol.ts";
import { retrying, unless } from "./_target.ts";

/** What one system does per operation. */
export interface Peer {
  create(key: string, description: string, body: string): Promise<unknown>;
  read(key: string): Promise<string>;
  update(key: string, body: string): Promise<unknown>;
  list(): Promise<number>;
  delete(key: string): Promise<unknown>;
  /** One read-modify-write increment of a counter; resolves to the conflicts retried. */
  increment(key: string): Promise<number>;
  close?(): Promise<void>;
}

/** Opens `system` in a place with a directory and a bucket. */
export async function openPeer(system: string, place: Location, nc?: NatsConnection) {
  const [dir, bucket] = [place.dir as string, place.bucket as string];
  const library = async (where: Location, checked: boolean, readBeforeUpdate = false) =>
    agentmem(await openStore(where, nc, readBeforeUpdate), checked);
  const peers: Record<string, () => Peer | Promise<Peer>> = {
    "agentmem file": () => library({ dir }, false),
    "agentmem file, readBeforeUpdate": () => library({ dir }, true, true),
    "agentmem jetstream": () => library({ bucket }, true),
    "Deno KV": () => denoKv(`${dir}/kv.sqlite`),
    "SQLite": () => sqlite(`${dir}/memory.db`),
    "Anthropic filesystem tool": () => anthropicTool(dir),
    "MCP memory (JSONL)": () => mcpJsonl(`${dir}/memory.jsonl`),
    "unstorage fs driver": () => unstorageFs(dir),
  };
  const open = peers[system];
  if (open === undefined) throw new Error(`Unknown peer "${system}"`);
  return await open();
}

/**
 * Runs `op` over `keys`, `reps` times: each key once per rep, one call at a time. A read, update
 * or delete that fails (of a key a lost create never wrote) is counted, not fatal.
 */
export async function runPeer(peer: Peer, op: string, keys: readonly string[], reps: number) {
  let [retries, seen, failed] = [0, 0, 0];
  const calls: Record<string, (key: string) => Promise<unknown>> = {
    create: (key) => peer.create(key, DESCRIPTION, CREATE),
    seed: (key) => peer.create(key, "counter", "count: 0;"),
    read: (key) => peer.read(key),
    update: (key) => peer.update(key, UPDATE),
    delete: (key) => peer.delete(key),
    list: async () => (seen = await peer.list()),
    increment: async (key) => (retries += await peer.increment(key)),
    value: async (key) => (seen = count(await peer.read(key))),
  };
  const call = calls[op];
  if (call === undefined) throw new Error(`Unknown peer operation "${op}"`);
  const tolerated = ["read", "update", "delete"].includes(op);
  const start = performance.timeOrigin + performance.now();
  for (let r = 0; r < reps; r++) {
    for (const key of keys) await call(key).catch((e) => tolerated ? failed++ : Promise.reject(e));
  }
  return { start, end: performance.timeOrigin + performance.now(), retries, seen, failed };
}

const CREATE = "c".repeat(1024);
const UPDATE = "u".repeat(1024);
// A counter's body, `count: N;`: a string the Anthropic tool's str_replace finds exactly.
const COUNT = /count: (\d+);/;
const count = (body: string) => Number(COUNT.exec(body)?.[1]);
const next = (body: string) => `count: ${count(body) + 1};`;
const isCode = (e: unknown, code: string) => (e as { code?: unknown }).code === code;
const missing = (what: string) => Promise.reject(new Error(`No entry ${what}`));

function agentmem(store: Store, checked: boolean): Peer {
  const opts = { scope: new Scope() };
  const descriptions = new Map<string, string>();
  const read = async (key: string) => {
    const e = await store.read(key, opts);
    descriptions.set(key, e.description);
    return e.content;
  };
  const write = (key: string, body: string) =>
    store.update(key, descriptions.get(key) ?? "counter", body, opts);
  const isConflict = (e: unknown) => checked && e instanceof StaleError;
  return {
    create(key, description, body) {
      descriptions.set(key, description);
      return store.create(key, description, body, opts);
    },
    read,
    update: write,
    list: async () => (await store.list()).length,
    delete: (key) => store.delete(key, opts),
    increment: (key) => retrying(unless(isConflict, async () => write(key, next(await read(key))))),
  };
}

// Several processes on one local Deno KV file get "database is locked" under contention: every
// call is retried on it, as a user would have to.
async function unlocked<T>(fn: () => Promise<T>): Promise<T> {
  let result: T | undefined;
  const isLocked = (e: unknown) => String(e).includes("database is locked");
  await retrying(unless(isLocked, async (retry) => {
    if (retry) await new Promise((r) => setTimeout(r, 1));
    // Awaited inside the attempt: a synchronous throw and a rejection are both caught.
    result = await fn();
  }));
  return result as T;
}

async function denoKv(path: string): Promise<Peer> {
  type V = { description: string; body: string };
  const kv = await unlocked(() => Deno.openKv(path));
  const seen = new Map<string, string>();
  const get = async (key: string) => {
    const e = await unlocked(() => kv.get<V>(["m", key]));
    if (e.value === null) return missing(key);
    seen.set(key, e.versionstamp);
    return { ...e, value: e.value };
  };
  const put = async (key: string, versionstamp: string | null, value: V) => {
    const atomic = () => kv.atomic().check({ key: ["m", key], versionstamp });
    return (await unlocked(() => atomic().set(["m", key], value).commit())).ok;
  };
  return {
    async create(key, description, body) {
      if (!(await put(key, null, { description, body }))) throw new Error(`${key} exists`);
    },
    read: async (key) => (await get(key)).value.body,
    async update(key, body) {
      const e = await get(key);
      const ok = await put(key, seen.get(key) ?? e.versionstamp, { ...e.value, body });
      if (!ok) throw new Error(`${key} changed`);
    },
    list: () => unlocked(async () => (await Array.fromAsync(kv.list({ prefix: ["m"] }))).length),
    delete: (key) => unlocked(() => kv.delete(["m", key])),
    increment: (key) =>
      retrying(async () => {
        const e = await get(key);
        return await put(key, e.versionstamp, { ...e.value, body: next(e.value.body) });
      }),
    close: () => Promise.resolve(kv.close()),
  };
}

async function sqlite(path: string): Promise<Peer> {
  const db = new DatabaseSync(path);
  db.exec("PRAGMA busy_timeout = 30000");
  // Switching to WAL and creating the table take locks the busy timeout does not always wait
  // for when several processes open the file at once.
  const columns = "key TEXT PRIMARY KEY, description TEXT, body TEXT, version INTEGER";
  const setUp = `PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
    CREATE TABLE IF NOT EXISTS m (${columns})`;
  await unlocked(() => Promise.resolve(db.exec(setUp)));
  const sql = (statement: string) => db.prepare(statement);
  const ins = sql("INSERT INTO m VALUES (?, ?, ?, 1)");
  const sel = sql("SELECT body, version FROM m WHERE key = ?");
  const upd = sql("UPDATE m SET body = ?, version = version + 1 WHERE key = ? AND version = ?");
  const lst = sql("SELECT key, description FROM m ORDER BY key");
  const del = sql("DELETE FROM m WHERE key = ?");
  const seen = new Map<string, number>();
  const get = (key: string) => {
    const row = sel.get(key) as { body: string; version: number } | undefined;
    if (row === undefined) throw new Error(`No entry ${key}`);
    seen.set(key, row.version);
    return row;
  };
  return {
    create: (key, description, body) => Promise.resolve(ins.run(key, description, body)),
    read: (key) => Promise.resolve(get(key).body),
    update(key, body) {
      const v = seen.get(key) ?? get(key).version;
      if (upd.run(body, key, v).changes !== 1) throw new Error(`${key} changed`);
      seen.set(key, v + 1);
      return Promise.resolve();
    },
    list: () => Promise.resolve(lst.all().length),
    delete: (key) => Promise.resolve(del.run(key)),
    increment: (key) =>
      retrying(() => {
        const row = get(key);
        return Promise.resolve(upd.run(next(row.body), key, row.version).changes === 1);
      }),
    close: () => Promise.resolve(db.close()),
  };
}

async function anthropicTool(dir: string): Promise<Peer> {
  const tool = await BetaLocalFilesystemMemoryTool.init(dir);
  const path = (key: string) => `/memories/${key}.md`;
  const bodies = new Map<string, string>();
  const view = async (key: string) => {
    const text = await tool.view({ command: "view", path: path(key) });
    const body = text.slice(text.lastIndexOf("\t") + 1);
    bodies.set(key, body);
    return body;
  };
  const replace = (key: string, old_str: string, new_str: string) =>
    tool.str_replace({ command: "str_replace", path: path(key), old_str, new_str });
  const gone = (e: unknown) => String(e).includes("did not appear verbatim");
  return {
    create: (key, description, body) =>
      tool.create({ command: "create", path: path(key), file_text: `${description}\n${body}` }),
    read: view,
    update: async (key, body) => replace(key, bodies.get(key) ?? await view(key), body),
    list: async () =>
      (await tool.view({ command: "view", path: "/memories" })).split("\n").length - 2,
    delete: (key) => tool.delete({ command: "delete", path: path(key) }),
    increment: (key) =>
      retrying(unless(gone, async () => {
        const body = await view(key);
        await replace(key, `count: ${count(body)};`, next(body));
      })),
  };
}

// The MCP reference memory server's loadGraph and saveGraph, reproduced (importing the package
// starts its stdio server): every call parses the whole JSONL file, every change rewrites it.
function mcpJsonl(file: string): Peer {
  type Entity = { type: "entity"; name: string; entityType: string; observations: string[] };
  const load = async () => {
    const absent = (e: unknown) => isCode(e, "ENOENT") ? "" : Promise.reject(e);
    const text = await readFile(file, "utf-8").catch(absent);
    return text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as Entity);
  };
  const save = async (graph: Entity[]) => {
    const temp = `${file}.${crypto.randomUUID().replaceAll("-", "")}.tmp`;
    await writeFile(temp, graph.map((e) => JSON.stringify(e)).join("\n"));
    await rename(temp, file);
  };
  const find = (graph: Entity[], key: string) => graph.find((x) => x.name === key);
  // Loads the graph, changes the entity `key` with `change` and saves the graph.
  const edit = async (key: string, change: (observations: string[]) => void) => {
    const graph = await load();
    const entity = find(graph, key);
    if (entity === undefined) return missing(key);
    change(entity.observations);
    await save(graph);
  };
  return {
    async create(name, description, body) {
      const graph = await load();
      if (find(graph, name) !== undefined) return;
      graph.push({ type: "entity", name, entityType: "memory", observations: [description, body] });
      await save(graph);
    },
    read: async (key) => find(await load(), key)?.observations[1] ?? missing(key),
    update: (key, body) => edit(key, (o) => o[1] = body),
    list: async () => (await load()).length,
    delete: async (key) => await save((await load()).filter((e) => e.name !== key)),
    increment: (key) => edit(key, (o) => o[1] = next(o[1] ?? "")).then(() => 0),
  };
}

function unstorageFs(dir: string): Peer {
  const storage = createStorage({ driver: fsDriver({ base: dir }) });
  const read = async (key: string) => String(await storage.getItem(key) ?? "");
  return {
    create: (key, description, body) => storage.setItem(key, `${description}\n${body}`),
    read,
    update: (key, body) => storage.setItem(key, body),
    list: async () => (await storage.getKeys()).length,
    delete: (key) => storage.removeItem(key),
    // The driver writes files in place: a read can find one half-written. Read again.
    increment: (key) =>
      retrying(async () => {
        const body = await read(key);
        if (COUNT.test(body)) await storage.setItem(key, next(body));
        return COUNT.test(body);
      }),
    close: () => storage.dispose(),
  };
}
