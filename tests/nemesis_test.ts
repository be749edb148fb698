// A short seeded nemesis run inside `deno task test`: one round of every fault (partitions, loss,
// a paused leader, crashes) on a 3-node nats-server 2.10.27 cluster in network namespaces, with
// client processes on every node. No acknowledged write is lost or applied twice, no deleted key
// comes back, and every call ends within its deadline with a typed error. The long run is
// `deno task nemesis`.

import assert from "node:assert/strict";
import { FAULTS } from "./nemesis/nemesis.ts";
import { canUseNamespaces } from "./nemesis/netns.ts";
import { runNemesisCluster, serverBinary } from "./nemesis/main.ts";

const SEED = 14;
const CI = Deno.env.get("CI") === "true";

// Root (for network namespaces) and nats-server 2.10.27 are needed. Without them: a loud skip,
// or under CI=true a failure, never a skip.
function missing(): string | undefined {
  if (!canUseNamespaces()) return "creating network namespaces needs root (ip netns)";
  if (serverBinary("2.10.27") === undefined) {
    return "nats-server 2.10.27 is missing; fetch it with .ci/nats-2.10.sh";
  }
  return undefined;
}

const why = missing();
if (why !== undefined && !CI) {
  console.error(`\n%c!!! SKIPPING the nemesis test: ${why} !!!\n`, "color: red; font-weight: bold");
}

Deno.test({
  name:
    `[nemesis] one round of every fault on a 3-node 2.10.27 cluster (seed ${SEED}) loses, duplicates and resurrects nothing, and nothing hangs`,
  ignore: why !== undefined && !CI,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    assert.equal(why, undefined, why);
    const lines: string[] = [];
    const result = await runNemesisCluster({
      seed: SEED,
      // An upper bound only: the run stops after one round of every fault.
      durationMs: 100_000,
      rounds: 1,
      bin: serverBinary("2.10.27") as string,
      clients: 3,
      marginMs: 3_000,
      schedule: { holdMs: [2_000, 3_500], healMs: [2_000, 3_000] },
      log: (l) => lines.push(l),
    });
    for (const line of result.lines) console.log(line);
    const v = result.verdict;
    assert.equal(result.error, undefined, lines.join("\n"));
    assert.deepEqual([...result.faults].sort(), [...FAULTS].sort());
    assert.ok(v.ops >= 100, `only ${v.ops} operations ran`);
    assert.deepEqual(
      {
        lost: v.lost,
        duplicated: v.duplicated,
        resurrected: v.resurrected,
        phantom: v.phantom,
        hung: v.hung,
        untyped: v.untyped,
      },
      { lost: 0, duplicated: 0, resurrected: 0, phantom: 0, hung: 0, untyped: 0 },
      v.examples.join("\n"),
    );
  },
});
