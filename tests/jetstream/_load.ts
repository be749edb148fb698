// A create load on a jetstream store and the read-back that finds lost writes, shared by the
// single-server fault test and the cluster tests.

import assert from "node:assert/strict";
import { type Store, UnavailableError } from "../../mod.ts";
import { retryUntil } from "../_lib/nats_server.ts";

/** The per-call deadline the load's stores use. */
export const TIMEOUT_MS = 2_000;
const WRITERS = 4;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Writers that create new keys as fast as the store lets them, recording which creates were
 * acknowledged and how every failure looked. They pause briefly after a failure.
 */
export class WriteLoad {
  /** Acknowledged creates: key → the content written. */
  readonly acked = new Map<string, string>();
  /** When each create was issued and acknowledged. */
  readonly ackTimes: Array<{ issued: number; acked: number }> = [];
  /** Failed calls: the error and how long the call took. */
  readonly failures: Array<{ error: unknown; ms: number }> = [];
  #stopped = false;
  readonly #running: Promise<void[]>;

  constructor(store: Store) {
    let n = 0;
    const writer = async (w: number) => {
      while (!this.#stopped) {
        const key = `w${w}-${n++}`;
        const issued = Date.now();
        try {
          await store.create(key, "written under faults", `content of ${key}`);
          this.acked.set(key, `content of ${key}`);
          this.ackTimes.push({ issued, acked: Date.now() });
        } catch (error) {
          this.failures.push({ error, ms: Date.now() - issued });
          await sleep(100);
        }
      }
    };
    this.#running = Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
  }

  /** Resolves once `count` creates have been acknowledged in all. */
  async reach(count: number, ms = 120_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.acked.size < count) {
      if (Date.now() > deadline) {
        throw new Error(`only ${this.acked.size} of ${count} writes were acknowledged`);
      }
      await sleep(20);
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#running;
  }

  /** Asserts every failure was an UnavailableError that came within 3 deadlines. */
  checkFailures(): void {
    for (const { error, ms } of this.failures) {
      assert.ok(error instanceof UnavailableError, `unexpected failure: ${error}`);
      assert.doesNotMatch(error.message, /nats:\/\/|127\.0\.0\.1/);
      assert.ok(ms < 3 * TIMEOUT_MS, `a failure took ${ms} ms, over 3 deadlines`);
    }
  }
}

// Retries a call the backend reports as unavailable (a cluster still electing, say).
export function settled<T>(call: () => Promise<T>): Promise<T> {
  return retryUntil(
    async () => {
      try {
        return { value: await call() };
      } catch (e) {
        if (e instanceof UnavailableError) throw e;
        return { error: e };
      }
    },
    60_000,
    0,
  ).then((r) => {
    if ("error" in r) throw r.error;
    return r.value;
  });
}

// Reads every acknowledged key back through a fresh store; returns the keys that are missing or
// hold something else.
export async function lostWrites(store: Store, acked: Map<string, string>): Promise<string[]> {
  const lost: string[] = [];
  for (const [key, content] of acked) {
    const entry = await settled(() => store.read(key)).catch(() => undefined);
    if (entry?.content !== content) lost.push(key);
  }
  const listed = new Set((await settled(() => store.list())).map((item) => item.key));
  for (const key of acked.keys()) if (!listed.has(key) && !lost.includes(key)) lost.push(key);
  return lost;
}
