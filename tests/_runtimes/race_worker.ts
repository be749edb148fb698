// One racer of the cross-runtime create race: opens a file store over the job's directory, says
// "ready", waits for a line on stdin (the driver's start signal, sent to every racer at once), then
// creates each key in order with its own id as the body, and prints what it won and lost. Runs
// unchanged on Deno (from source) and, bundled against the npm package, on Node and Bun.

import { once } from "node:events";
import process from "node:process";
import { ExistsError, openFileStore } from "../../mod.ts";

/** What a racer does: the directory, the keys to create, and its id (written as each body). */
export interface RaceJob {
  readonly dir: string;
  readonly keys: readonly string[];
  readonly id: string;
}

/** What a racer reports once it is done. */
export interface RaceReport {
  readonly t: "done";
  readonly id: string;
  /** Keys whose create() succeeded. */
  readonly won: string[];
  /** Keys whose create() failed with ExistsError. */
  readonly lost: string[];
  /** Any other failure, as "key: Name: message". */
  readonly errors: string[];
}

const print = (record: unknown) => process.stdout.write(JSON.stringify(record) + "\n");

const job = JSON.parse(process.argv[2] ?? "") as RaceJob;
const store = await openFileStore({ dir: job.dir });
print({ t: "ready", id: job.id });
await once(process.stdin, "data");
process.stdin.destroy();

const report: RaceReport = { t: "done", id: job.id, won: [], lost: [], errors: [] };
for (const key of job.keys) {
  try {
    await store.create(key, `writer ${job.id}`, job.id);
    report.won.push(key);
  } catch (e) {
    if (e instanceof ExistsError) report.lost.push(key);
    else report.errors.push(`${key}: ${e instanceof Error ? `${e.name}: ${e.message}` : e}`);
  }
}
print(report);
await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
process.exit(0);
