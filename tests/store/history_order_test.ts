// The audit log's order: each key's versions in the order of its chain, whatever the writers'
// clocks say; keys interleaved by time.

import assert from "node:assert/strict";
import type { Version } from "../../mod.ts";
import { mergeLog } from "../../store/history_call.ts";

function v(key: string, revision: string, at: string): Version {
  return { key, revision, op: "update", at, via: "api", tainted: false };
}

Deno.test("mergeLog() never reorders a key's versions, even when its writers' clocks disagree", () => {
  // Key a: version 2 was written by a process whose clock is an hour slow.
  // The backend's order (here: by time, as the file backend gives it).
  const items = [
    v("a", "2", "2026-12-01T09:00:00.000Z"),
    v("b", "1", "2026-12-01T09:30:00.000Z"),
    v("a", "1", "2026-12-01T10:00:00.000Z"),
    v("a", "3", "2026-12-01T10:30:00.000Z"),
    v("b", "2", "2026-12-01T11:00:00.000Z"),
  ];
  const merged = mergeLog({ items, problems: [] });
  const order = merged.map((x) => `${x.key}${x.revision}`);
  assert.deepEqual(order.filter((x) => x.startsWith("a")), ["a1", "a2", "a3"]);
  assert.deepEqual(order.filter((x) => x.startsWith("b")), ["b1", "b2"]);
  // Across keys, by time: b1 (9:30) comes before anything of a at 10:00 or later.
  assert.deepEqual(order, ["a1", "b1", "a2", "a3", "b2"]);
  assert.equal(merged.length, items.length);
});
