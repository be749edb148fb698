// One workload process of the power-cut run, killed with SIGKILL at the cut. It takes one JSON
// argument (a `WorkerJob`), opens one file store per workload (durable or not, read-before-update
// or not) and writes to its own keys until it is killed, in several lanes at once (so writes share
// directory flushes), each lane owning its keys. Before each call it prints
// `B <key> <op> <version>` and after it `A <key>` (an acknowledged write) on stdout,
// synchronously, so the line is in the pipe before the next call starts. A failure is
// `E <key> <code>: <text>`: a store error stops the lane, anything else the process (status 3).
// Run by tests/powercut/run.ts, never by hand.

import { MemoryError, openFileStore, Scope } from "../../mod.ts";
import { Rng } from "../_lib/rng.ts";
import { entryFor, HISTORY } from "./_content.ts";

/** A key a lane owns: the version it holds now (`null`: absent), and the next version to write. */
export interface KeyState {
  readonly key: string;
  readonly version: number | null;
  readonly next: number;
}

/** One store a worker opens, and the lanes that write through it. */
export interface WorkerStore {
  readonly durable: boolean;
  readonly readBeforeUpdate: boolean;
  readonly lanes: readonly (readonly KeyState[])[];
}

/** What a worker is asked to do. */
export interface WorkerJob {
  readonly dir: string;
  readonly seed: number;
  readonly stores: readonly WorkerStore[];
}

const ENCODER = new TextEncoder();
let stopped = 0;
let lanesInAll = 0;

function say(line: string): void {
  const bytes = ENCODER.encode(`${line}\n`);
  for (let off = 0; off < bytes.length;) off += Deno.stdout.writeSync(bytes.subarray(off));
}

async function lane(
  job: WorkerStore,
  store: Awaited<ReturnType<typeof openFileStore>>,
  keys: readonly KeyState[],
  rng: Rng,
): Promise<never> {
  const scope = new Scope();
  const state = new Map(keys.map((k) => [k.key, { version: k.version, next: k.next }]));
  if (job.readBeforeUpdate) {
    for (const k of keys) if (k.version !== null) await store.read(k.key, { scope });
  }
  for (;;) {
    const key = rng.pick(keys).key;
    const s = state.get(key)!;
    const roll = rng.next();
    let op: "create" | "update" | "delete";
    if (s.version === null) op = !job.readBeforeUpdate && roll < 0.25 ? "update" : "create";
    else op = roll < 0.75 ? "update" : "delete";
    const version = op === "delete" ? 0 : s.next++;
    say(`B ${key} ${op} ${version}`);
    try {
      if (op === "delete") {
        if (!await store.delete(key, { scope })) throw new Error("the key was already gone");
        s.version = null;
      } else {
        const { description, content } = entryFor(key, version);
        await store[op](key, description, content, { scope });
        s.version = version;
      }
    } catch (e) {
      const code = e instanceof MemoryError ? e.code : "error";
      say(`E ${key} ${code}: ${e instanceof Error ? e.message : String(e)}`);
      // A store error stops the lane (what the key holds is unknown from here); anything else is
      // a failure of the run.
      if (code === "error") Deno.exit(3);
      // With every lane stopped the process has nothing left to do: it ends, so the run moves on.
      if (++stopped === lanesInAll) Deno.exit(0);
      for (;;) await new Promise((resolve) => setTimeout(resolve, 60_000)); // until the kill
    }
    say(`A ${key}`);
    // A pause between writes, as an agent makes: a write of `durable: false` never waits on I/O,
    // and without a turn of the event loop its lane would starve the others (whose fsyncs
    // complete in callbacks) and flood the file system.
    await new Promise((resolve) => setTimeout(resolve, rng.int(0, 3)));
  }
}

if (import.meta.main) {
  const job = JSON.parse(Deno.args[0] ?? "") as WorkerJob;
  const lanes: Promise<never>[] = [];
  let n = 0;
  for (const spec of job.stores) {
    const store = await openFileStore({
      dir: job.dir,
      durable: spec.durable,
      readBeforeUpdate: spec.readBeforeUpdate,
      history: HISTORY,
    });
    for (const keys of spec.lanes) {
      lanes.push(lane(spec, store, keys, new Rng(job.seed * 31 + n++)));
    }
  }
  lanesInAll = lanes.length;
  say("R");
  await Promise.all(lanes);
}
