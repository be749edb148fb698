// The capacity gate shared by the backends: when it counts, and what it refuses.

import assert from "node:assert/strict";
import { CapacityError, MAX_ENTRIES } from "../mod.ts";
import { CapacityGate, COUNT_MAX_AGE_MS, COUNT_SLACK } from "../store/_capacity.ts";

function counter(start: number) {
  const c = {
    value: start,
    calls: 0,
    count: () => {
      c.calls++;
      return Promise.resolve(c.value);
    },
  };
  return c;
}

Deno.test("CapacityGate.check() counts on first use and trusts a fresh count far below the limit", async () => {
  const gate = new CapacityGate();
  const c = counter(10);
  await gate.check("a", c.count);
  assert.equal(c.calls, 1);
  for (let i = 0; i < 20; i++) await gate.check(`k${i}`, c.count);
  assert.equal(c.calls, 1, "a fresh count far from the limit stands in");
});

Deno.test("CapacityGate.check() counts every time within the slack of the limit, and refuses at it", async () => {
  const gate = new CapacityGate();
  const c = counter(MAX_ENTRIES - COUNT_SLACK);
  await gate.check("a", c.count);
  await gate.check("b", c.count);
  assert.equal(c.calls, 2);
  c.value = MAX_ENTRIES;
  const err = await gate.check("full", c.count).then(() => undefined, (e) => e);
  assert.ok(err instanceof CapacityError);
  assert.equal(err.key, "full");
  c.value = MAX_ENTRIES - 1;
  await gate.check("freed", c.count);
});

Deno.test("CapacityGate.check() adds its own creates, so one writer never passes the limit", async () => {
  const gate = new CapacityGate();
  const c = counter(MAX_ENTRIES - COUNT_SLACK - 10);
  let allowed = 0;
  for (let i = 0; i < 200; i++) {
    try {
      await gate.check(`k${i}`, c.count);
      allowed++;
      c.value++; // the create it let through happened
    } catch (e) {
      assert.ok(e instanceof CapacityError);
    }
  }
  assert.equal(c.value, MAX_ENTRIES);
  assert.equal(allowed, COUNT_SLACK + 10);
});

Deno.test("CapacityGate.check() counts again once its count is a second old", async () => {
  const gate = new CapacityGate();
  const c = counter(0);
  await gate.check("a", c.count);
  c.value = MAX_ENTRIES; // filled by another process
  await gate.check("b", c.count); // within the second: trusted
  await new Promise((r) => setTimeout(r, COUNT_MAX_AGE_MS + 50));
  await assert.rejects(gate.check("c", c.count), CapacityError);
  assert.equal(c.calls, 2);
});
