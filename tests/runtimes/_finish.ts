// The end of every runtime entry: runs the tests it registered, prints one JSON line per test on
// stdout, and exits non-zero when one failed. Runs unchanged on Deno, Node and Bun.

import process from "node:process";
import { runRegistered } from "../_lib/test_api.ts";

/** Runs the registered tests and exits the process with their verdict. */
export async function finish(): Promise<never> {
  const failed = await runRegistered((line) => process.stdout.write(line + "\n"));
  // Let stdout drain before exiting: it may be a pipe the driver is still reading.
  await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
  process.exit(failed > 0 ? 1 : 0);
}
