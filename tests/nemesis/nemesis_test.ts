// A short seeded nemesis run inside `deno task test`: one round of every fault (partitions, loss,
// a paused leader, crashes) on a 3-node nats-server 2.10.27 cluster in network namespaces, with
// client processes on every node. No acknowledged write is lost or applied twice, no deleted key
// comes back, and every call ends within its deadline with a typed error. The long run is
// `deno task nemesis`.

import assert from "node:assert/strict";
import { check, summaryLine } from "./checker.ts";
import type { HistoryRecord, OpRecord } from "./history.ts";
import { FAULTS } from "./nemesis.ts";
import { runNemesisCluster } from "./main.ts";
import { serverBinary } from "./servers.ts";
import { assertTools, needs, type Tool } from "../_lib/needs.ts";

const SEED = 14;
// Root and ip (network namespaces), nft (the faults) and nats-server 2.10.27 are needed. Without
// them: a loud skip, or under CI=true a failure, never a skip.
const TOOLS: Tool[] = ["root", "ip", "nft", "nats-server 2.10.27"];

Deno.test({
  name:
    `[nemesis] one round of every fault on a 3-node 2.10.27 cluster (seed ${SEED}) loses, duplicates and resurrects nothing, and nothing hangs`,
  ...needs("the nemesis test", ...TOOLS),
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    assertTools(...TOOLS);
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
    // History (issue 18): every acknowledged write's version is readable after the run, and no
    // write has two.
    assert.ok(v.versionedKeys > 0, "no key's history was read");
    assert.deepEqual(
      {
        unversioned: v.unversioned,
        doubleVersions: v.doubleVersions,
        phantomVersions: v.phantomVersions,
      },
      { unversioned: 0, doubleVersions: 0, phantomVersions: 0 },
      v.examples.join("\n"),
    );
  },
});

// The checker itself, on hand-written histories: each anomaly it exists for is found.
function op(o: Partial<OpRecord> & Pick<OpRecord, "wl" | "f" | "key">): OpRecord {
  return { t: "op", p: 0, node: 0, ns: "x", invoke: 0, complete: 10, outcome: "ok", ...o };
}
const final = (key: string, value: string | null): HistoryRecord => ({
  t: "final",
  ns: "x",
  key,
  value,
});
const OPTS = { deadlineMs: 2_000, marginMs: 1_000 };

Deno.test("nemesis check() finds a lost increment, a double-applied one and a stale read", () => {
  const v = check([
    op({ wl: "ctr", f: "update", key: "c", v: "a" }),
    op({ wl: "ctr", f: "update", key: "c", v: "b" }), // acknowledged, then overwritten
    op({ wl: "ctr", f: "update", key: "c", v: "d", outcome: "unavailable" }),
    op({ wl: "ctr", f: "read", key: "c", invoke: 20, complete: 30, r: 0 }),
    final("c", "a d d"),
  ], OPTS);
  assert.equal(v.lost, 1);
  assert.equal(v.duplicated, 1);
  assert.equal(v.indeterminate, 1);
  assert.equal(v.staleReads, 1);
  assert.equal(summaryLine(v), "nemesis: 4 ops, 1 indeterminate, 1 lost, 1 duplicated, 0 hung");
});

Deno.test("nemesis check() finds two acknowledged winners of one create race", () => {
  const v = check([
    op({ wl: "uniq", f: "create", key: "k1", v: "a" }),
    op({ wl: "uniq", f: "create", key: "k1", v: "b" }),
    op({ wl: "uniq", f: "create", key: "k2", v: "c", outcome: "refused", code: "exists" }),
    final("k1", "b"),
    final("k2", null),
  ], OPTS);
  assert.equal(v.duplicated, 1);
  assert.equal(v.lost, 1); // k2 was reported to exist and is gone
});

Deno.test("nemesis check() finds a resurrected delete, a lost create, a hang and an untyped failure", () => {
  const v = check([
    op({ wl: "set", f: "create", key: "s1", v: "a" }),
    op({ wl: "set", f: "delete", key: "s1", invoke: 20, complete: 30, r: true }),
    op({ wl: "set", f: "create", key: "s2", v: "b" }),
    op({ wl: "set", f: "create", key: "s3", v: "c", outcome: "unavailable" }),
    op({ wl: "set", f: "delete", key: "s3", invoke: 20, complete: 4_000, r: false }),
    op({ wl: "set", f: "create", key: "s4", v: "d", outcome: "untyped", code: "TypeError" }),
    final("s1", "a"),
    final("s2", null),
    final("s3", "c"),
    final("s4", null),
  ], OPTS);
  assert.equal(v.resurrected, 1);
  assert.equal(v.lost, 1);
  assert.equal(v.hung, 1);
  assert.equal(v.untyped, 1);
  assert.equal(v.phantom, 0); // s3 was indeterminate: maybe applied
});

Deno.test("nemesis check() finds an acknowledged write without a version, a doubled one and a phantom version", () => {
  const versions = (key: string, list: { rev: string; op: string; id?: string }[]) => ({
    t: "versions" as const,
    ns: "x",
    key,
    versions: list,
  });
  const v = check([
    op({ wl: "ctr", f: "create", key: "c", v: "a" }),
    op({ wl: "ctr", f: "update", key: "c", v: "b" }),
    op({ wl: "ctr", f: "update", key: "c", v: "d" }), // acknowledged; its version is missing
    op({ wl: "ctr", f: "update", key: "c", v: "e", outcome: "refused", code: "stale" }),
    final("c", "a b d"),
    versions("c", [
      { rev: "5", op: "update", id: "e" }, // a refused write's version
      { rev: "4", op: "update", id: "b" },
      { rev: "3", op: "update", id: "b" }, // the same write twice
      { rev: "2", op: "create", id: "a" },
    ]),
    op({ wl: "set", f: "create", key: "s", v: "f" }),
    op({ wl: "set", f: "delete", key: "s", v: "g", invoke: 20, complete: 30, r: true }),
    final("s", null),
    versions("s", [{ rev: "7", op: "create", id: "f" }]), // the delete's version is missing
  ], OPTS);
  assert.equal(v.versionedKeys, 2);
  assert.equal(v.unversioned, 2);
  assert.equal(v.doubleVersions, 1);
  assert.equal(v.phantomVersions, 1);
  assert.equal(v.lost, 0);
});
