import { conformance } from "./conformance.ts";
import { natsFixture } from "./_jetstream_fixture.ts";
import { needsNats } from "./_nats_server.ts";

conformance({
  backend: "jetstream",
  enforcesReadBeforeUpdate: true,
  testOptions: needsNats(),
  open: async () => {
    const f = await natsFixture();
    return { store: await f.open(), peer: () => f.open(), cleanup: () => f.cleanup() };
  },
});
