// The file backend's concurrency claims, proved with separate OS processes (`deno run` of
// tests/file/_worker.ts) sharing one directory: link-based create, unlink-based delete,
// rename-based update, and what a SIGKILL at a random point leaves behind.

import assert from "node:assert/strict";
import {
  auditStore,
  history,
  NotFoundError,
  openFileStore,
  readVersion,
  type Store,
} from "../../mod.ts";
import { checkEntry, stampedEntry } from "./_entries.ts";
import { mulberry32 } from "../_lib/rng.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { WorkerGroup, type WorkerRecord } from "./_spawn.ts";
import { isBookkeepingName } from "../../backends/file/testing.ts";

const PROCESSES = 4;
const KEY_LEGAL_FILE = /^[A-Za-z0-9._=-]+\.md$/;

async function withTempDir(fn: (root: string) => Promise<void>): Promise<void> {
  await using root = await tempDir("agentmem-xproc-");
  await Deno.mkdir(`${root.path}/store`);
  await Deno.mkdir(`${root.path}/ctl`);
  await fn(root.path);
}

// One worker per process, each running `mode` on all of `contended` from one start signal;
// every attempt's record, once all have exited.
async function contend(
  root: string,
  mode: "create" | "delete",
  contended: string[],
): Promise<Array<WorkerRecord & { worker: number }>> {
  await using group = new WorkerGroup();
  for (let i = 0; i < PROCESSES; i++) {
    const job = {
      mode,
      dir: `${root}/store`,
      start: `${root}/ctl/start`,
      id: `p${i}`,
      keys: contended,
    };
    group.spawn(job, [root]);
  }
  await startTogether(group, root);
  await group.succeeded();
  const results = recordsOf(group, mode);
  assert.equal(results.length, PROCESSES * contended.length, "every attempt reported");
  return results;
}

function keys(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(3, "0")}`);
}

// Starts the workers, waits until all have opened the store, then lets them go at once.
async function startTogether(group: WorkerGroup, root: string): Promise<void> {
  await group.ready();
  await Deno.writeTextFile(`${root}/ctl/start`, "go");
}

function recordsOf(group: WorkerGroup, t: string): Array<WorkerRecord & { worker: number }> {
  return group.workers.flatMap((w, worker) =>
    w.records.filter((r) => r.t === t).map((r) => ({ ...r, worker }))
  );
}

// Every name in the directory, split into what the store may list and everything else.
async function scan(dir: string): Promise<{ entries: string[]; temps: string[] }> {
  const entries: string[] = [];
  const temps: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (isBookkeepingName(e.name)) continue; // the store's own versions and bookkeeping
    if (e.name.startsWith(".")) temps.push(e.name);
    else if (e.isFile && KEY_LEGAL_FILE.test(e.name)) entries.push(e.name.slice(0, -3));
    else throw new Error(`unexpected name in the store directory: ${e.name}`);
  }
  return { entries: entries.sort(), temps };
}

Deno.test(`create() across ${PROCESSES} processes has exactly one winner per key`, async () => {
  await withTempDir(async (root) => {
    const dir = `${root}/store`;
    const contended = keys("c", 150);
    {
      const results = await contend(root, "create", contended);
      const store = await openFileStore({ dir });
      for (const key of contended) {
        const attempts = results.filter((r) => r.key === key);
        const winners = attempts.filter((r) => r.won === true);
        assert.equal(winners.length, 1, `key ${key}: ${JSON.stringify(attempts)}`);
        for (const loser of attempts.filter((r) => r.won !== true)) {
          assert.equal(loser.code, "exists", `key ${key}: a loser failed otherwise`);
        }
        // The entry on disk is the winner's, whole.
        assert.deepEqual(
          await store.read(key),
          stampedEntry({ writer: `p${winners[0]!.worker}`, seq: 0, key, length: 64 }),
        );
      }
      assert.deepEqual((await store.list()).map((i) => i.key), contended);
      assert.deepEqual((await scan(dir)).temps, [], "no temp file is left behind");
    }
  });
});

Deno.test(`delete() across ${PROCESSES} processes reports existed exactly once per key`, async () => {
  await withTempDir(async (root) => {
    const dir = `${root}/store`;
    const contended = keys("d", 150);
    const setup = await openFileStore({ dir, durable: false });
    for (const key of contended) await setup.create(key, "to be deleted", key);
    {
      const results = await contend(root, "delete", contended);
      for (const key of contended) {
        const attempts = results.filter((r) => r.key === key);
        assert.ok(attempts.every((r) => r.error === undefined), JSON.stringify(attempts));
        assert.equal(
          attempts.filter((r) => r.existed === true).length,
          1,
          `key ${key}: ${JSON.stringify(attempts)}`,
        );
      }
      assert.deepEqual(await setup.list(), []);
      assert.deepEqual(await scan(dir), { entries: [], temps: [] });
    }
  });
});

Deno.test("read() and list() in 2 processes never see a torn, mixed or missing entry while 2 processes update()", async () => {
  await withTempDir(async (root) => {
    const dir = `${root}/store`;
    const contended = keys("u", 8);
    const setup = await openFileStore({ dir });
    for (const key of contended) {
      const { description, content } = stampedEntry({ writer: "init", seq: 0, key, length: 10 });
      await setup.create(key, description, content);
    }
    const start = `${root}/ctl/start`;
    const stop = `${root}/ctl/stop`;
    {
      await using group = new WorkerGroup();
      const writers = [0, 1].map((i) =>
        group.spawn(
          { mode: "update", dir, start, id: `w${i}`, keys: contended, rounds: 40, seed: 1000 + i },
          [root],
        )
      );
      const readers = [0, 1].map((i) =>
        group.spawn({ mode: "read", dir, start, stop, id: `r${i}`, keys: contended }, [root])
      );
      await startTogether(group, root);
      for (const w of writers) {
        const status = await w.finished();
        assert.ok(status.success, w.stderr);
        assert.equal((await w.waitFor((r) => r.t === "updated")).updates, 40 * contended.length);
      }
      await Deno.writeTextFile(stop, "stop");
      await group.succeeded();

      let versions = 0;
      for (const r of readers) {
        const done = await r.waitFor((x) => x.t === "read-done");
        assert.equal(done.violationCount, 0, JSON.stringify(done.violations, null, 2));
        assert.ok((done.reads as number) > 0 && (done.lists as number) > 0);
        versions += done.versions as number;
      }
      // The readers overlapped the writers: they saw more versions than the one per key left at
      // the end (otherwise the test proved nothing).
      assert.ok(versions > 2 * contended.length, `readers saw only ${versions} versions`);
      // The final state is the last round of one of the writers, for every key.
      for (const key of contended) {
        const stamp = checkEntry(key, await setup.read(key));
        assert.ok(typeof stamp !== "string", stamp as string);
        assert.equal(stamp.seq, 40);
      }
      assert.deepEqual((await scan(dir)).temps, []);
    }
  });
});

// What a key may hold, in the eyes of the test: absent, or the entry one churn op wrote.
type Holding = { readonly writer: string; readonly seq: number } | null;

interface Op {
  readonly seq: number;
  readonly op: "update" | "create" | "delete";
  readonly key: string;
}

function applied(before: Holding, op: Op, writer: string, result: unknown): Holding {
  // A delete answers true or false; a failed one (an error code) changes nothing.
  if (op.op === "delete") return typeof result === "boolean" || result === "ok" ? null : before;
  // A create of a key that exists fails and changes nothing; so would any failed write.
  return result === "ok" ? { writer, seq: op.seq } : before;
}

function holdingOf(read: { description: string; content: string } | null, key: string): Holding {
  if (read === null) return null;
  const stamp = checkEntry(key, read);
  if (typeof stamp === "string") throw new Error(stamp);
  return { writer: stamp.writer, seq: stamp.seq };
}

async function readOrNull(store: Store, key: string) {
  try {
    return await store.read(key);
  } catch (e) {
    if (e instanceof NotFoundError) return null;
    throw e;
  }
}

const KILLS = 60;

Deno.test(`a writer killed with SIGKILL at random points (${KILLS} times) leaves every key whole and readable`, async () => {
  await withTempDir(async (root) => {
    const dir = `${root}/store`;
    const pool = keys("k", 10);
    const seed = Date.now() >>> 0;
    const rand = mulberry32(seed);
    const context = `seed ${seed}`;
    let state = new Map<string, Holding>(pool.map((k) => [k, null]));
    let opsDone = 0;
    let inFlightKills = 0;
    for (let run = 0; run < KILLS; run++) {
      const writer = `kill${run}`;
      const durable = run % 2 === 0;
      {
        await using group = new WorkerGroup();
        const w = group.spawn(
          { mode: "churn", dir, id: writer, keys: pool, seed: seed + run, durable },
          [root],
        );
        // Let it finish a random number of operations (0 to 5) and then run a random while
        // longer (0 to 15 ms), then kill it wherever it is.
        const finish = Math.floor(rand() * 6);
        await w.waitFor((r) => (finish === 0 ? r.t === "ready" : r.t === "e" && r.seq === finish));
        await new Promise((r) => setTimeout(r, Math.floor(rand() * 16)));
        w.kill();
        const status = await w.finished();
        assert.equal(status.signal, "SIGKILL", `run ${run} ended by itself: ${w.stderr}`);

        // What the test may find per key: the outcome of the last finished op, or, for the key of
        // the op in flight at the kill, its outcome too.
        const begun = w.records.filter((r) => r.t === "b") as unknown as Op[];
        const ended = new Map(w.records.filter((r) => r.t === "e").map((r) => [r.seq, r.result]));
        const allowed = new Map<string, Holding[]>();
        for (const op of begun) {
          const before = state.get(op.key) ?? null;
          if (ended.has(op.seq)) {
            state.set(op.key, applied(before, op, writer, ended.get(op.seq)));
            opsDone++;
          } else {
            inFlightKills++;
            allowed.set(op.key, [before, applied(before, op, writer, "ok")]);
          }
        }

        // A store opened afresh sees only whole entries, and exactly the ones the ops left.
        const store = await openFileStore({ dir });
        const { entries, temps } = await scan(dir);
        // Left behind: temp files (swept once their writer is seen dead) and the lock of a writer
        // killed holding it (broken by the next writer of that key).
        assert.ok(
          temps.every((t) => t.endsWith(".tmp") || t.endsWith(".lock") || t.endsWith(".del")),
          `run ${run}: ${temps.join(" ")}`,
        );
        const listed = (await store.list()).map((i) => i.key);
        assert.deepEqual(listed, entries, `run ${run}: list() must show every entry file`);
        assert.ok(listed.every((k) => !k.startsWith(".")), "temp files are never listed");
        const next = new Map<string, Holding>();
        for (const key of pool) {
          const found = holdingOf(await readOrNull(store, key), key);
          const expected = allowed.get(key) ?? [state.get(key) ?? null];
          assert.ok(
            expected.some((h) => JSON.stringify(h) === JSON.stringify(found)),
            `run ${run} (${context}): ${key} holds ${JSON.stringify(found)}, expected one of ${
              JSON.stringify(expected)
            }`,
          );
          next.set(key, found);
          // History and head agree: the newest version is what the key holds, or its delete.
          const [newest] = await history(store, key);
          if (found === null) {
            assert.ok(newest === undefined || newest.op === "delete", `run ${run}: ${key} history`);
          } else {
            assert.ok(newest !== undefined && newest.op !== "delete", `run ${run}: ${key} history`);
            assert.deepEqual(
              await readVersion(store, key, newest.revision),
              await store.read(key),
              `run ${run}: ${key}'s newest version is not what it holds`,
            );
          }
        }
        state = next;
        assert.deepEqual(
          (await auditStore(store)).history,
          [],
          `run ${run}: check finds the history damaged`,
        );

        // And it still works.
        await store.create("probe", "after a kill", `run ${run}`);
        assert.equal((await store.read("probe")).content, `run ${run}`);
        await store.update("probe", "after a kill", "updated");
        assert.equal(await store.delete("probe"), true);
      }
    }
    const tempsLeft = (await scan(dir)).temps.length;
    console.log(
      `[file kill test] ${KILLS} kills, ${opsDone} ops finished before them, ${inFlightKills} ops in flight at a kill, ${tempsLeft} stray temp files left (${context})`,
    );
    assert.ok(opsDone > 0, "the writers never finished an operation before being killed");
  });
});
