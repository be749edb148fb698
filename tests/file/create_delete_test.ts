// create() racing delete() of the same key across processes: a create either succeeds or says
// ExistsError (the key held a memory when it tried), never UnavailableError "its name is taken by
// something that is not a memory file", which would send an operator after a problem that is
// not there. With history off the writers take no lock; with history on they do (a handle with
// history off is refused on a directory that keeps history, so the two never mix).

import assert from "node:assert/strict";
import { denoRunner, startGroup } from "../_lib/lock_fleet.ts";
import { fileTest } from "./_fixture.ts";

const MS = 4000;

for (const histories of [[false, false, false], [true, true, true]]) {
  fileTest(
    `create() racing delete() of one key in 3 processes (history ${
      histories.map((h) => (h ? "on" : "off")).join(", ")
    }) succeeds or says ExistsError`,
    async (dir) => {
      const job = (role: "create" | "delete", history: boolean) =>
        [denoRunner(), { job: "create-delete", dir, key: "k", role, ms: MS, history }] as const;
      const [h1, h2, h3] = histories as [boolean, boolean, boolean];
      const procs = startGroup("host", [job("create", h1), job("create", h2), job("delete", h3)]);
      try {
        for (const p of procs) await p.succeeded();
      } finally {
        for (const p of procs) await p[Symbol.asyncDispose]();
      }
      const [a, b, d] = procs.map((p) => p.records.find((l) => l.t === "done")!);
      for (const creator of [a!, b!]) {
        const { ok = 0, exists = 0, ...other } = creator.counts as Record<string, number>;
        assert.deepEqual(
          other,
          {},
          `a create failed otherwise: ${JSON.stringify(creator.messages)}`,
        );
        assert.ok(ok > 0 && exists > 0, `the race ran: ${JSON.stringify(creator.counts)}`);
      }
      assert.deepEqual(Object.keys(d!.counts as object), ["ok"], JSON.stringify(d));
    },
  );
}
