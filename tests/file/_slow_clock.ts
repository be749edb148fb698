// A writer whose clock is behind by `lagMs` (every Date it makes, and Date.now), for
// tests/file/clock_test.ts: it updates `key` once under run `run` and prints {"t":"done"}.
//   deno run -A _slow_clock.ts <json job>   job: { dir, key, run, content, lagMs }

const job = JSON.parse(Deno.args[0] ?? "{}") as {
  dir: string;
  key: string;
  run: string;
  content: string;
  lagMs: number;
};
const Real = Date;
class Slow extends Real {
  constructor(...args: unknown[]) {
    super(...((args.length === 0 ? [Real.now() - job.lagMs] : args) as [number]));
  }
  static override now(): number {
    return Real.now() - job.lagMs;
  }
}
globalThis.Date = Slow as DateConstructor;
const { openFileStore, Scope } = await import("../../mod.ts");
const store = await openFileStore({ dir: job.dir });
await store.update(job.key, `about ${job.key}`, job.content, {
  scope: new Scope({ run: job.run }),
});
console.log(JSON.stringify({ t: "done", now: new Date().toISOString() }));
