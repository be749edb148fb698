// A writer process for the file backend's lock tests, on the public API only: the same file runs
// under Deno from source and, bundled against the npm package, under Node and Bun, so a fleet of
// mixed runtimes (kernel locks on Deno, the portable scheme elsewhere) can share one directory.
// Takes one JSON job as its last argument and prints one JSON line per event.

import process from "node:process";
import { MemoryError, openFileStore, Scope, StaleError } from "../../mod.ts";

/** What a lock worker does. */
export type LockJob =
  /** `n` read-modify-write increments of `key` (a decimal counter), retried on StaleError; every
   * `listEvery` attempts a list(), which sweeps what dead writers left. */
  | { job: "counter"; dir: string; key: string; n: number; listEvery?: number }
  /** Revision-checked updates of `key` as fast as it can, until killed. */
  | { job: "hammer"; dir: string; key: string }
  /** One call on `key` with revision checks, reported with its outcome and duration. */
  | { job: "once"; dir: string; key: string; op: "update" | "delete" | "create"; timeoutMs: number }
  /** For `ms`, creates (or deletes) `key` over and over, counting the outcomes by error code. */
  | {
    job: "create-delete";
    dir: string;
    key: string;
    role: "create" | "delete";
    ms: number;
    history: boolean;
  };

const say = (record: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify(record)}\n`);
const code = (e: unknown) => e instanceof MemoryError ? e.code : e instanceof Error ? e.name : "?";
const job = JSON.parse(process.argv[process.argv.length - 1] ?? "{}") as LockJob;

async function main(): Promise<void> {
  switch (job.job) {
    case "counter": {
      const store = await openFileStore({ dir: job.dir, readBeforeUpdate: true, durable: false });
      say({ t: "ready", pid: process.pid });
      let retries = 0;
      let attempts = 0;
      for (let done = 0; done < job.n;) {
        if (job.listEvery !== undefined && ++attempts % job.listEvery === 0) await store.list();
        const scope = new Scope();
        const { content } = await store.read(job.key, { scope });
        try {
          await store.update(job.key, "counter", String(Number(content) + 1), { scope });
          done++;
        } catch (e) {
          if (!(e instanceof StaleError)) throw e;
          retries++;
        }
      }
      say({ t: "done", n: job.n, retries });
      break;
    }
    case "hammer": {
      const store = await openFileStore({ dir: job.dir, readBeforeUpdate: true, durable: false });
      for (let i = 0;; i++) {
        const scope = new Scope();
        await store.read(job.key, { scope });
        try {
          await store.update(job.key, "hammered", String(i), { scope });
        } catch (e) {
          if (!(e instanceof StaleError)) throw e;
        }
        if (i === 0) say({ t: "first" });
      }
    }
    case "once": {
      const store = await openFileStore({ dir: job.dir, readBeforeUpdate: true });
      const signal = AbortSignal.timeout(job.timeoutMs);
      const started = performance.now();
      let outcome: Record<string, unknown> = { ok: true };
      try {
        if (job.op === "create") await store.create(job.key, "d", "created", { signal });
        else if (job.op === "delete") {
          outcome = { ok: true, deleted: await store.delete(job.key, { signal }) };
        } else {
          const scope = new Scope();
          await store.read(job.key, { scope });
          await store.update(job.key, "d", "updated", { scope, signal });
        }
      } catch (e) {
        if (!(e instanceof MemoryError)) throw e;
        outcome = { ok: false, code: e.code, message: e.message, key: e.key };
      }
      say({ t: "result", ms: performance.now() - started, ...outcome });
      break;
    }
    case "create-delete": {
      const store = await openFileStore({ dir: job.dir, durable: false, history: job.history });
      const counts: Record<string, number> = {};
      const messages: string[] = [];
      const until = Date.now() + job.ms;
      while (Date.now() < until) {
        let outcome = "ok";
        try {
          if (job.role === "create") await store.create(job.key, "d", "c");
          else await store.delete(job.key);
        } catch (e) {
          outcome = code(e);
          if (outcome !== "exists" && messages.length < 5) messages.push(String(e));
        }
        counts[outcome] = (counts[outcome] ?? 0) + 1;
      }
      say({ t: "done", counts, messages });
      break;
    }
  }
}

try {
  await main();
} catch (e) {
  say({ t: "error", code: code(e), message: e instanceof Error ? e.message : String(e) });
  process.exitCode = 1;
}
