// A separate OS process for the file backend's cross-process tests. It takes one JSON argument
// (a `Job`), opens a file store on `job.dir`, prints `{"t":"ready"}`, waits for the start file
// when one is named (the barrier), does its job and prints one JSON object per line on stdout.
// Run by tests/file/_spawn.ts, never by hand.

import { MemoryError, openFileStore, type Store } from "../../mod.ts";
import {
  checkDescription,
  checkEntry,
  MAX_STAMP_LENGTH,
  stampedEntry,
  stampId,
} from "./_entries.ts";
import { mulberry32 } from "../_lib/rng.ts";

/** What a worker is asked to do. */
export type Job =
  | { mode: "create"; dir: string; start?: string; id: string; keys: string[] }
  | { mode: "delete"; dir: string; start?: string; id: string; keys: string[] }
  | {
    mode: "update";
    dir: string;
    start?: string;
    id: string;
    keys: string[];
    rounds: number;
    seed: number;
  }
  | { mode: "read"; dir: string; start?: string; stop: string; id: string; keys: string[] }
  | {
    mode: "churn";
    dir: string;
    start?: string;
    id: string;
    keys: string[];
    seed: number;
    durable: boolean;
  }
  | { mode: "list-io"; dir: string; start?: string; ctl: string }
  | { mode: "ops"; dir: string; start?: string; ops: Call[] };

/** One call of an "ops" job: a store method and its arguments, or a raw write to test the premise. */
export type Call =
  | ["open", string]
  | ["list"]
  | ["read", string]
  | ["create", string, string, string]
  | ["update", string, string, string]
  | ["delete", string]
  | ["raw-write", string];

function emit(record: Record<string, unknown>): void {
  console.log(JSON.stringify(record));
}

function describe(e: unknown): string {
  return e instanceof Error ? `${codeOf(e)}: ${e.message}` : String(e);
}

function codeOf(e: unknown): string {
  return e instanceof MemoryError ? e.code : e instanceof Error ? e.name : String(e);
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(path: string | undefined): Promise<void> {
  if (path === undefined) return;
  while (!(await exists(path))) await new Promise((r) => setTimeout(r, 2));
}

async function createAll(store: Store, id: string, keys: string[]): Promise<void> {
  for (const key of keys) {
    try {
      await store.create(key, ...entryArgs(id, 0, key, 64));
      emit({ t: "create", key, won: true });
    } catch (e) {
      emit({ t: "create", key, won: false, code: codeOf(e) });
    }
  }
}

async function deleteAll(store: Store, keys: string[]): Promise<void> {
  for (const key of keys) {
    try {
      emit({ t: "delete", key, existed: await store.delete(key) });
    } catch (e) {
      emit({ t: "delete", key, error: codeOf(e) });
    }
  }
}

function entryArgs(writer: string, seq: number, key: string, length: number): [string, string] {
  const { description, content } = stampedEntry({ writer, seq, key, length });
  return [description, content];
}

async function updateRounds(
  store: Store,
  job: { id: string; keys: string[]; rounds: number; seed: number },
): Promise<void> {
  const rand = mulberry32(job.seed);
  let updates = 0;
  for (let round = 1; round <= job.rounds; round++) {
    for (const key of job.keys) {
      const length = Math.floor(rand() * MAX_STAMP_LENGTH);
      await store.update(key, ...entryArgs(job.id, round, key, length));
      updates++;
    }
  }
  emit({ t: "updated", updates });
}

// Reads every key and lists, over and over, until the stop file appears; then one last pass.
async function readLoop(store: Store, job: { stop: string; keys: string[] }): Promise<void> {
  const violations: string[] = [];
  const versions = new Set<string>();
  let reads = 0;
  let lists = 0;
  let violationCount = 0;
  const violation = (what: string) => {
    violationCount++;
    if (violations.length < 20) violations.push(what);
  };
  const expected = [...job.keys].sort().join(",");
  const pass = async () => {
    for (const key of job.keys) {
      try {
        const result = checkEntry(key, await store.read(key));
        if (typeof result === "string") violation(result);
        else versions.add(stampId(result));
      } catch (e) {
        violation(`read(${key}) failed: ${describe(e)}`);
      }
      reads++;
    }
    try {
      const items = await store.list();
      const keys = items.map((i) => i.key).join(",");
      if (keys !== expected) violation(`list() returned [${keys}], expected [${expected}]`);
      for (const item of items) {
        const problem = checkDescription(item.key, item.description);
        if (problem !== undefined) violation(`list: ${problem}`);
      }
    } catch (e) {
      violation(`list() failed: ${describe(e)}`);
    }
    lists++;
  };
  while (!(await exists(job.stop))) await pass();
  await pass();
  emit({ t: "read-done", reads, lists, versions: versions.size, violationCount, violations });
}

// Writes forever (until killed): updates, creates and deletes over a small key pool. Prints a
// "b" line before each operation and an "e" line after, so the test knows which operation, if
// any, was in flight when the kill landed.
async function churn(store: Store, job: { id: string; keys: string[]; seed: number }) {
  const rand = mulberry32(job.seed);
  for (let seq = 1;; seq++) {
    const key = job.keys[Math.floor(rand() * job.keys.length)]!;
    const r = rand();
    const op = r < 0.6 ? "update" : r < 0.8 ? "create" : "delete";
    const length = Math.floor(rand() * MAX_STAMP_LENGTH);
    emit({ t: "b", seq, op, key, length });
    let result: unknown;
    try {
      if (op === "update") await store.update(key, ...entryArgs(job.id, seq, key, length));
      else if (op === "create") await store.create(key, ...entryArgs(job.id, seq, key, length));
      else result = await store.delete(key);
      result ??= "ok";
    } catch (e) {
      result = codeOf(e);
    }
    emit({ t: "e", seq, result });
  }
}

// Lists, then reads every body, each step released by a file in `ctl` and reported by a line,
// so that the test can read this process's I/O counters (/proc/<pid>/io) between the steps.
async function listThenRead(store: Store, ctl: string): Promise<void> {
  await waitFor(`${ctl}/list`);
  const items = await store.list();
  emit({ t: "listed", count: items.length });
  await waitFor(`${ctl}/read`);
  let contentChars = 0;
  for (const { key } of items) contentChars += (await store.read(key)).content.length;
  emit({ t: "read-all", contentChars });
  await waitFor(`${ctl}/exit`);
}

// Runs each call in order and prints its outcome: the value, or the error's code and message.
async function runOps(store: Store, ops: Call[]): Promise<void> {
  for (const [i, call] of ops.entries()) {
    try {
      let value: unknown;
      switch (call[0]) {
        case "open":
          value = (await openFileStore({ dir: call[1] })).info();
          break;
        case "list":
          value = await store.list();
          break;
        case "read":
          value = await store.read(call[1]);
          break;
        case "create":
          value = await store.create(call[1], call[2], call[3]);
          break;
        case "update":
          value = await store.update(call[1], call[2], call[3]);
          break;
        case "delete":
          value = await store.delete(call[1]);
          break;
        case "raw-write":
          value = await Deno.writeTextFile(call[1], "raw");
          break;
      }
      emit({ t: "op", i, ok: true, value: value ?? null });
    } catch (e) {
      emit({
        t: "op",
        i,
        ok: false,
        code: codeOf(e),
        memoryError: e instanceof MemoryError,
        message: e instanceof Error ? e.message : String(e),
      });
    }
  }
}

async function main(): Promise<void> {
  const job = JSON.parse(Deno.args[0] ?? "null") as Job;
  const durable = job.mode === "churn" ? job.durable : true;
  const store = await openFileStore({ dir: job.dir, durable });
  emit({ t: "ready", pid: Deno.pid });
  await waitFor(job.start);
  switch (job.mode) {
    case "create":
      return await createAll(store, job.id, job.keys);
    case "delete":
      return await deleteAll(store, job.keys);
    case "update":
      return await updateRounds(store, job);
    case "read":
      return await readLoop(store, job);
    case "churn":
      return await churn(store, job);
    case "list-io":
      return await listThenRead(store, job.ctl);
    case "ops":
      return await runOps(store, job.ops);
  }
}

await main();
emit({ t: "done" });
