// The nemesis: faults on the cluster in a seeded random order, healed between. Partitions and
// packet loss are nftables rules in the node namespaces (only the harness's own addresses are
// ever named); pauses are SIGSTOP/SIGCONT; crashes are SIGKILL and a restart on the same store.

import type { ClusterNode, NsCluster } from "./cluster.ts";
import type { NemesisRecord } from "./history.ts";
import { inNamespace, nodeAddr, sh } from "./netns.ts";
import type { Rng } from "../_lib/rng.ts";

/** Every kind of fault, each run once per round in a shuffled order. */
export const FAULTS = [
  "isolate-leader",
  "isolate-client-node",
  "bridge",
  "loss-10%",
  "pause-leader",
  "kill-node",
  "kill-leader",
] as const;

/** A fault's name. */
export type Fault = typeof FAULTS[number];

/** How long faults last and how long the cluster heals between them, in milliseconds. */
export interface Schedule {
  readonly holdMs: readonly [number, number];
  readonly healMs: readonly [number, number];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function nft(node: ClusterNode, script: string): Promise<void> {
  await sh(...inNamespace(node.ns, "nft", ["-f", "-"]), script + "\n");
}

// Drops every packet between `node` and the nodes `others` (both directions, both ends).
async function cut(a: ClusterNode, b: ClusterNode): Promise<void> {
  for (const [x, y] of [[a, b], [b, a]] as const) {
    const peer = nodeAddr(y.index);
    await nft(
      x,
      `add rule inet nemesis input ip saddr ${peer} drop\nadd rule inet nemesis output ip daddr ${peer} drop`,
    );
  }
}

/** Removes every rule the nemesis added, in every node. */
export async function healNetwork(cluster: NsCluster): Promise<void> {
  for (const node of cluster.nodes) {
    await nft(node, "flush chain inet nemesis input\nflush chain inet nemesis output").catch(
      () => {},
    );
  }
}

/** Runs faults until `endAt`, recording each start and heal; heals everything before it returns. */
export async function runNemesis(opts: {
  cluster: NsCluster;
  rng: Rng;
  schedule: Schedule;
  endAt: number;
  /** Stop after this many rounds (every fault once per round) even before `endAt`. */
  rounds?: number;
  /** The stream leader's node, or undefined when no node answers. */
  leader: () => Promise<ClusterNode | undefined>;
  record: (r: NemesisRecord) => void;
  log: (line: string) => void;
}): Promise<Fault[]> {
  const { cluster, rng, schedule, endAt } = opts;
  const done: Fault[] = [];
  const nodes = cluster.nodes;
  // Bounded: a fault and a heal take at least a second each.
  for (let round = 0; round < (opts.rounds ?? 10_000) && Date.now() < endAt; round++) {
    for (const fault of rng.shuffle(FAULTS)) {
      if (Date.now() >= endAt) break;
      const leader = (await opts.leader()) ?? rng.pick(nodes);
      const others = (n: ClusterNode) => nodes.filter((x) => x !== n);
      let heal: () => Promise<void> = () => healNetwork(cluster);
      let detail = "";
      switch (fault) {
        case "isolate-leader":
        case "isolate-client-node": {
          const victim = fault === "isolate-leader" ? leader : rng.pick(others(leader));
          for (const o of others(victim)) await cut(victim, o);
          detail = `${victim.name} | ${others(victim).map((n) => n.name).join(" ")}`;
          break;
        }
        case "bridge": {
          const [a, m, b] = rng.shuffle(nodes) as [ClusterNode, ClusterNode, ClusterNode];
          await cut(a, b);
          detail = `${a.name} - ${m.name} - ${b.name}`;
          break;
        }
        case "loss-10%":
          for (const n of nodes) {
            await nft(
              n,
              'add rule inet nemesis input iifname "eth0" numgen random mod 100 < 10 drop\n' +
                'add rule inet nemesis output oifname "eth0" numgen random mod 100 < 10 drop',
            );
          }
          detail = "all nodes";
          break;
        case "pause-leader":
          await leader.pause();
          heal = () => Promise.resolve(leader.resume());
          detail = leader.name;
          break;
        case "kill-node":
        case "kill-leader": {
          const victim = fault === "kill-leader" ? leader : rng.pick(nodes);
          await victim.kill();
          heal = () => victim.restart();
          detail = victim.name;
          break;
        }
      }
      const hold = rng.int(...schedule.holdMs);
      opts.record({ t: "nemesis", f: "start", fault, detail, time: Date.now() });
      opts.log(`nemesis: ${fault} (${detail}) for ${hold} ms`);
      await sleep(Math.max(0, Math.min(hold, endAt - Date.now())));
      await heal();
      opts.record({ t: "nemesis", f: "heal", fault, time: Date.now() });
      done.push(fault);
      await sleep(rng.int(...schedule.healMs));
    }
  }
  await healAll(cluster);
  return done;
}

/** Heals the network, resumes paused nodes and restarts stopped ones. */
export async function healAll(cluster: NsCluster): Promise<void> {
  await healNetwork(cluster);
  for (const node of cluster.nodes) {
    node.resume();
    if (!node.running) await node.restart();
  }
}
