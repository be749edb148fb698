// Unit test of checkServerVersion(), which refuses replicated buckets on servers whose
// revision-checked updates are not atomic (through the backend's test face).

import assert from "node:assert/strict";
import { ConfigError } from "../../store/errors.ts";
import { checkServerVersion } from "../../backends/jetstream/testing.ts";

Deno.test("checkServerVersion() refuses replicated buckets before 2.9.21 and names version, reason and fix", () => {
  for (const version of ["2.9.10", "2.9.20", "2.8.4", "v2.9.10"]) {
    assert.throws(
      () => checkServerVersion("memory", 3, version),
      (e: unknown) =>
        e instanceof ConfigError && e.message.includes(version) &&
        /not atomic/.test(e.message) && /silently lost/.test(e.message) &&
        /4320/.test(e.message) && /upgrade/.test(e.message),
    );
  }
  for (const version of ["2.9.21", "2.9.25", "2.10.27", "2.11.0", "2.10.0-beta.1"]) {
    checkServerVersion("memory", 3, version);
  }
  // A single replica is safe on any server.
  checkServerVersion("memory", 1, "2.9.10");
});
