// One racer of the cross-runtime races: opens a file store over the job's directory, says "ready",
// waits for a line on stdin (the driver's start signal, sent to every racer at once), then creates
// each key in order with its own id as the body, and prints what it won and lost. In "update" mode
// the store checks revisions: the racer reads every key before it is ready, then updates each from
// that read, and a loser gets StaleError. Runs unchanged on Deno (from source) and, bundled against
// the npm package, on Node and Bun.

import { once } from "node:events";
import process from "node:process";
import { ExistsError, openFileStore, Scope, StaleError } from "../../mod.ts";

/** What a racer does: the directory, the keys to create, and its id (written as each body). */
export interface RaceJob {
  readonly dir: string;
  readonly keys: readonly string[];
  readonly id: string;
  /** "create" (default) races create(); "update" races update() from one read each. */
  readonly mode?: "create" | "update";
}

/** What a racer reports once it is done. */
export interface RaceReport {
  readonly t: "done";
  readonly id: string;
  /** Keys whose create() succeeded. */
  readonly won: string[];
  /** Keys whose create() failed with ExistsError (update(): StaleError). */
  readonly lost: string[];
  /** Any other failure, as "key: Name: message". */
  readonly errors: string[];
}

const print = (record: unknown) => process.stdout.write(JSON.stringify(record) + "\n");

const job = JSON.parse(process.argv[2] ?? "") as RaceJob;
const update = job.mode === "update";
const store = await openFileStore({ dir: job.dir, readBeforeUpdate: update });
const scope = new Scope();
if (update) { for (const key of job.keys) await store.read(key, { scope }); }
print({ t: "ready", id: job.id });
await once(process.stdin, "data");
process.stdin.destroy();

const report: RaceReport = { t: "done", id: job.id, won: [], lost: [], errors: [] };
for (const key of job.keys) {
  try {
    if (update) await store.update(key, `writer ${job.id}`, job.id, { scope });
    else await store.create(key, `writer ${job.id}`, job.id);
    report.won.push(key);
  } catch (e) {
    if (e instanceof (update ? StaleError : ExistsError)) report.lost.push(key);
    else report.errors.push(`${key}: ${e instanceof Error ? `${e.name}: ${e.message}` : e}`);
  }
}
print(report);
await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
process.exit(0);
