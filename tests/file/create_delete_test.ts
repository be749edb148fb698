// create() racing delete() of the same key across processes: a create either succeeds or says
// ExistsError (the key held a memory when it tried), never UnavailableError "its name is taken by
// something that is not a memory file", which would send an operator after a problem that is
// not there.

import assert from "node:assert/strict";
import { denoRunner, startGroup } from "./_lock_fleet.ts";
import { fileTest } from "../_file_fixture.ts";

const MS = 5000;

fileTest(
  "create() racing delete() of one key in 3 processes succeeds or says ExistsError",
  async (dir) => {
    const job = (role: "create" | "delete") =>
      [denoRunner(), { job: "create-delete", dir, key: "k", role, ms: MS }] as const;
    const procs = startGroup("host", [job("create"), job("create"), job("delete")]);
    try {
      const ends = await Promise.all(procs.map((p) => p.done));
      for (const end of ends) assert.equal(end.code, 0, end.stderr);
    } finally {
      for (const p of procs) p.kill();
    }
    const [a, b, d] = procs.map((p) => p.lines.find((l) => l.t === "done")!) as [
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    for (const creator of [a, b]) {
      const { ok = 0, exists = 0, ...other } = creator.counts as Record<string, number>;
      assert.deepEqual(other, {}, `a create failed otherwise: ${JSON.stringify(creator.messages)}`);
      assert.ok(ok > 0 && exists > 0, `the race ran: ${JSON.stringify(creator.counts)}`);
    }
    assert.deepEqual(Object.keys(d.counts as object), ["ok"], JSON.stringify(d));
  },
);
