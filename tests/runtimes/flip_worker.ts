// A writer for the symlink flipper test (tests/file/flipper_test.ts): writes, reads the history
// of and checks a file store in a loop while another process swaps parts of its history for
// symlinks to a directory outside. Runs on Deno from source and, bundled, on Node. Prints one
// JSON line: every outcome by error code, and any failure that is not a MemoryError.
//   <runtime> flip_worker <json job>   job: { dir, ms, keys }

import process from "node:process";
import { auditStore, history, MemoryError, openFileStore } from "../../mod.ts";

const job = JSON.parse(process.argv[process.argv.length - 1] ?? "{}") as {
  dir: string;
  ms: number;
  keys: string[];
};
const counts: Record<string, number> = {};
const untyped: string[] = [];

async function attempt(what: string, fn: () => Promise<unknown>): Promise<void> {
  let outcome = "ok";
  try {
    await fn();
  } catch (e) {
    outcome = e instanceof MemoryError ? e.code : "untyped";
    if (!(e instanceof MemoryError) && untyped.length < 5) untyped.push(`${what}: ${e}`);
  }
  counts[`${what} ${outcome}`] = (counts[`${what} ${outcome}`] ?? 0) + 1;
}

const store = await openFileStore({
  dir: job.dir,
  durable: false,
  history: { versions: 4, days: 0 },
});
process.stdout.write(`${JSON.stringify({ t: "ready" })}\n`);
const until = Date.now() + job.ms;
for (let i = 0; Date.now() < until; i++) {
  const key = job.keys[i % job.keys.length]!;
  await attempt("update", () => store.update(key, `about ${key}`, `v${i}`));
  if (i % 5 === 0) await attempt("delete", () => store.delete(key));
  if (i % 5 === 1) await attempt("create", () => store.create(key, `about ${key}`, `c${i}`));
  if (i % 7 === 0) await attempt("history", () => history(store, key));
  if (i % 23 === 0) await attempt("check", () => auditStore(store));
}
process.stdout.write(`${JSON.stringify({ t: "done", counts, untyped })}\n`);
