// The jetstream backend shared by separate Deno processes, each with its own NATS connection:
// revision-checked writes hold across processes, not only across stores in one process.

import assert from "node:assert/strict";
import { CapacityError, MAX_ENTRIES } from "../../mod.ts";
import { BUCKET, jetstreamTest, natsFixture } from "../_lib/jetstream_fixture.ts";
import type { Child } from "../_lib/spawn.ts";
import { jetstreamWorker } from "./_spawn.ts";
import type { Job } from "./_worker.ts";

const PROCESSES = 4;
const INCREMENTS = 50;
const KEYS = 40;

const test = jetstreamTest;

// Starts the workers, waits until each listens on the control subject, and returns them.
async function startWorkers(
  job: (control: string) => Job,
): Promise<{ workers: Child[]; control: string }> {
  const control = `agentmem.test.${crypto.randomUUID()}`;
  const workers = Array.from({ length: PROCESSES }, () => jetstreamWorker(job(control)));
  try {
    await Promise.all(workers.map((w) => w.next("ready")));
  } catch (e) {
    await Promise.all(workers.map((w) => w[Symbol.asyncDispose]()));
    throw e;
  }
  return { workers, control };
}

test(`${PROCESSES} processes incrementing one counter by read -> update lose no increment`, async () => {
  await using f = await natsFixture();
  const store = await f.open({ prefix: "shared" });
  await store.create("counter", "a shared counter", "0");
  const { workers, control } = await startWorkers((control) => ({
    servers: f.server.url,
    bucket: BUCKET,
    control,
    mode: "counter",
    increments: INCREMENTS,
  }));
  try {
    f.nc.publish(control);
    const results = await Promise.all(workers.map((w) => w.next("counted")));
    await Promise.all(workers.map((w) => w.succeeded()));
    const done = results.reduce((n, r) => n + (r.done as number), 0);
    const stale = results.reduce((n, r) => n + (r.stale as number), 0);
    const final = Number((await store.read("counter")).content);
    console.log(
      `counter: ${PROCESSES} processes, ${done} acknowledged increments, ${stale} StaleError retries, final value ${final}, lost ${
        done - final
      }`,
    );
    assert.equal(done, PROCESSES * INCREMENTS);
    assert.equal(final, done);
  } finally {
    await Promise.all(workers.map((w) => w[Symbol.asyncDispose]()));
  }
});

test(`${PROCESSES} processes racing on ${KEYS} keys: one creator and one existed=true deleter each`, async () => {
  await using f = await natsFixture();
  const store = await f.open({ prefix: "shared" });
  const { workers, control } = await startWorkers((control) => ({
    servers: f.server.url,
    bucket: BUCKET,
    control,
    mode: "contend",
    keys: KEYS,
  }));
  try {
    // One round per key: go, then every process's answer for that key.
    const rounds = async (type: string) => {
      const winners: number[][] = [];
      for (let i = 0; i < KEYS; i++) {
        f.nc.publish(control);
        const records = await Promise.all(workers.map((w) => w.next(type)));
        for (const r of records) assert.equal(r.key, `key${i}`);
        winners.push(records.flatMap((r, w) => r.won ? [w] : []));
      }
      return winners;
    };
    const creators = await rounds("created");
    assert.equal((await store.list()).length, KEYS);
    const deleters = await rounds("deleted");
    await Promise.all(workers.map((w) => w.succeeded()));
    for (let i = 0; i < KEYS; i++) {
      assert.equal(creators[i]?.length, 1, `key${i} must have exactly one creator`);
      assert.equal(deleters[i]?.length, 1, `key${i} must have exactly one existed=true deleter`);
    }
    const spread = (winners: number[][]) => new Set(winners.flat()).size;
    console.log(
      `contention: ${PROCESSES} processes x ${KEYS} keys, one round per key; creates won by ${
        spread(creators)
      } distinct processes, existed=true deletes by ${spread(deleters)}`,
    );
    assert.deepEqual(await store.list(), []);
  } finally {
    await Promise.all(workers.map((w) => w[Symbol.asyncDispose]()));
  }
});

test(
  `${PROCESSES} processes filling an empty store end with ${MAX_ENTRIES} to ${
    MAX_ENTRIES + PROCESSES
  } entries, and every acknowledged create is there`,
  async () => {
    await using f = await natsFixture();
    const store = await f.open({ prefix: "shared" });
    const { workers, control } = await startWorkers((control) => ({
      servers: f.server.url,
      bucket: BUCKET,
      control,
      mode: "fill",
    }));
    try {
      f.nc.publish(control);
      const results = await Promise.all(workers.map((w) => w.next("filled")));
      await Promise.all(workers.map((w) => w.succeeded()));
      const created = results.reduce((n, r) => n + (r.created as number), 0);
      const listed = (await store.list()).length;
      console.log(
        `fill: ${PROCESSES} processes from empty created ${created} entries (${
          results.map((r) => r.created).join(" + ")
        }); the store lists ${listed}`,
      );
      // Overlapping creates may overshoot by at most the creates in flight: one per process.
      assert.ok(listed >= MAX_ENTRIES && listed <= MAX_ENTRIES + PROCESSES, `${listed} entries`);
      assert.equal(created, listed);
      await assert.rejects(store.create("one-more", "d", "c"), CapacityError);
    } finally {
      await Promise.all(workers.map((w) => w[Symbol.asyncDispose]()));
    }
  },
);
