// What a jetstream create is made of, in one process, each part timed next to the others key by
// key (BENCH.md, "What stands in the way"): the floor's create alone; the floor with what the
// library adds, an exact count (a stream info) and the read of what a new version chains to (a
// direct get of the key's history subject) beside it, then the create; and the library's create.

import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { Locations } from "./_location.ts";
import { openStore } from "./_location.ts";
import { median, ratios } from "./_stats.ts";
import { entriesOf } from "./_target.ts";
import type { MicroRow } from "./micro.ts";

const ENTRIES = entriesOf(1024);
const DESCRIPTION = "bench";

/** The create's parts, µs per op, and the library's time over the floor with those parts. */
export async function createPartsSection(o: {
  readonly quick: boolean;
  readonly trials: number;
  readonly locations: Locations;
  readonly nc?: NatsConnection | undefined;
}): Promise<MicroRow> {
  const nc = o.nc as NatsConnection;
  const jsm = await jetstreamManager(nc);
  const trials: Record<string, number>[] = [];
  for (let t = 0; t < o.trials; t++) {
    await using location = await o.locations.fresh("jetstream");
    const bucket = location.bucket as string;
    const store = await openStore(location, nc);
    const kv = await new Kvm(nc).open(bucket);
    const calls: Record<string, (key: string) => Promise<unknown>> = {
      "library create": (key) => store.create(`l${key}`, DESCRIPTION, ENTRIES.createContent),
      "raw create": (key) => kv.create(`r${key}`, ENTRIES.createBytes),
      "raw + count + link": async (key) => {
        await Promise.all([
          jsm.streams.info(`KV_${bucket}`),
          jsm.direct.getMessage(`KVH_${bucket}`, { last_by_subj: `$KVH.${bucket}.p${key}` }),
        ]);
        await kv.create(`p${key}`, ENTRIES.createBytes);
      },
    };
    const total: Record<string, number> = {};
    const keys = Array.from({ length: o.quick ? 30 : 300 }, (_, i) => `${t}-${i}`);
    for (const key of keys) {
      for (const [label, call] of Object.entries(calls)) {
        const t0 = performance.now();
        await call(key);
        total[label] = (total[label] ?? 0) + performance.now() - t0;
      }
    }
    trials.push(
      Object.fromEntries(Object.entries(total).map(([l, ms]) => [l, (ms * 1000) / keys.length])),
    );
  }
  const labels = Object.keys(trials[0] ?? {});
  const values = Object.fromEntries(labels.map((l) => [l, median(trials.map((t) => t[l]!))]));
  const { trials: _, ...spread } = ratios(
    trials.map((t) => [t["library create"], t["raw + count + link"]]),
  );
  return {
    section: "create parts",
    backend: "jetstream",
    unit: "µs/op",
    values,
    ratio: { of: "library create / raw + count + link", ...spread },
  };
}
