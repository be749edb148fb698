// The flipper of tests/_lib/flip.ts, a process of its own: swaps a directory of a store's
// history (`.history`, or `.history/<key>`) for a symlink to a directory outside the store and
// back, `rounds` times, a few milliseconds each way, while writers run. What a writer made under
// the name meanwhile is moved aside, so the real directory always comes back.
//   deno run -A _flipper.ts <json job>   job: { dir, target, outside, rounds }

const job = JSON.parse(Deno.args[0] ?? "{}") as {
  dir: string;
  target: string;
  outside: string;
  rounds: number;
};
const name = `${job.dir}/${job.target}`;
const aside = `${name}.real`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let swapped = 0;
for (let r = 0; r < job.rounds; r++) {
  try {
    Deno.renameSync(name, aside);
  } catch {
    await sleep(2);
    continue; // not there this instant (a writer's own swap): try the next round
  }
  try {
    Deno.symlinkSync(job.outside, `${name}.link`);
    Deno.renameSync(`${name}.link`, name);
    swapped++;
  } catch {
    // A writer made the name again in between: it stays aside for the checks.
    try {
      Deno.removeSync(`${name}.link`);
    } catch { /* gone */ }
  }
  await sleep(1 + (r % 5));
  try {
    const st = Deno.lstatSync(name);
    if (st.isSymlink) Deno.removeSync(name);
    else Deno.renameSync(name, `${name}.made${r}`);
  } catch { /* gone */ }
  Deno.renameSync(aside, name);
  await sleep(1 + (r % 3));
}
console.log(JSON.stringify({ t: "done", swapped }));
