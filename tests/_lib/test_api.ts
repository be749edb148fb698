// Test registration that runs on Deno, Node and Bun. Under Deno a test is a `Deno.test`; elsewhere
// it is collected here and run by `runRegistered()` (tests/runtimes/), which prints one JSON line
// per test so that the Deno test driving that process can report each one as a step.

/** The options of a test that every runtime understands (the sanitizers only matter to Deno). */
export interface TestOptions {
  /** Skip the test (reported as skipped, never as passed). */
  readonly ignore?: boolean;
  readonly sanitizeOps?: boolean;
  readonly sanitizeResources?: boolean;
}

/** A test to register: its name, its body and its options. */
export interface TestDefinition extends TestOptions {
  readonly name: string;
  readonly fn: () => Promise<void> | void;
}

/** One test's outcome, as `runRegistered()` prints it (`t` is always `"test"`). */
export interface TestRecord {
  readonly t: "test";
  readonly name: string;
  readonly status: "ok" | "failed" | "skipped";
  /** The failure's stack (or message), when it failed. */
  readonly error?: string;
}

interface DenoTest {
  test(definition: TestDefinition): void;
}

const deno = (globalThis as { Deno?: DenoTest }).Deno;
const collected: TestDefinition[] = [];

/** Registers a test: `Deno.test` under Deno, else kept for `runRegistered()`. */
export function test(definition: TestDefinition): void {
  if (deno !== undefined) deno.test(definition);
  else collected.push(definition);
}

/**
 * Runs the collected tests one after another, printing a `TestRecord` JSON line for each through
 * `print`, and returns how many failed. Under Deno nothing was collected.
 */
export async function runRegistered(print: (line: string) => void): Promise<number> {
  let failed = 0;
  for (const { name, fn, ignore } of collected.splice(0)) {
    let record: TestRecord;
    if (ignore) {
      record = { t: "test", name, status: "skipped" };
    } else {
      try {
        await fn();
        record = { t: "test", name, status: "ok" };
      } catch (e) {
        failed++;
        record = {
          t: "test",
          name,
          status: "failed",
          error: e instanceof Error ? (e.stack ?? e.message) : String(e),
        };
      }
    }
    print(JSON.stringify(record));
  }
  return failed;
}
