// A separate OS process for the file backend's limit and revision-check tests. It takes one JSON
// job as its argument and prints one JSON line per event.

import {
  CapacityError,
  MemoryError,
  openFileStore,
  openStore,
  Scope,
  StaleError,
} from "../../mod.ts";

/** What a worker does. */
export type RbuJob =
  | { job: "counter"; dir: string; key: string; n: number }
  | { job: "replace"; dir: string; key: string; n: number; id: string }
  | { job: "capacity"; dir: string; prefix: string; go: string; refusals: number }
  | { job: "readonly"; dir: string };

const say = (record: Record<string, unknown>) => console.log(JSON.stringify(record));
const job = JSON.parse(Deno.args[0] ?? "{}") as RbuJob;

switch (job.job) {
  case "counter": {
    // Read-modify-write increments with retries on StaleError: none may be lost.
    const store = await openFileStore({ dir: job.dir, readBeforeUpdate: true });
    let retries = 0;
    for (let done = 0; done < job.n;) {
      const scope = new Scope();
      const { content } = await store.read(job.key, { scope });
      try {
        await store.update(job.key, "counter", String(Number(content) + 1), { scope });
        done++;
        if (done === 1) say({ t: "first" });
      } catch (e) {
        if (!(e instanceof StaleError)) throw e;
        retries++;
      }
    }
    say({ t: "done", retries });
    break;
  }
  case "replace": {
    // Plain updates (no revision check), each with a body no other write has.
    const store = await openFileStore({ dir: job.dir });
    for (let i = 0; i < job.n; i++) await store.update(job.key, "shared", `${job.id}:${i}`);
    say({ t: "done" });
    break;
  }
  case "capacity": {
    // Creates until the store refuses `refusals` times, starting together with the other
    // workers once the file `go` exists, so that they race at the limit.
    const store = await openFileStore({ dir: job.dir });
    say({ t: "ready" });
    while (!(await Deno.stat(job.go).then(() => true, () => false))) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    let created = 0;
    let full = 0;
    for (let i = 0; full < job.refusals; i++) {
      try {
        await store.create(`${job.prefix}-${i}`, "filler", "");
        created++;
      } catch (e) {
        if (!(e instanceof CapacityError)) throw e;
        full++;
      }
    }
    say({ t: "done", created, full });
    break;
  }
  case "readonly": {
    try {
      const store = await openStore({ backend: "file", readOnly: true, options: { dir: job.dir } });
      const items = await store.list();
      const first = items[0] === undefined ? null : await store.read(items[0].key);
      say({ t: "listed", count: items.length, first });
      await store.create("x", "d", "c").catch((e) => say({ t: "write", code: e.code }));
    } catch (e) {
      say({ t: "error", code: e instanceof MemoryError ? e.code : String(e) });
    }
    break;
  }
}
