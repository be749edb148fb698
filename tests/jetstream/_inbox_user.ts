// A NATS user that may subscribe only under its own inbox prefix (`_INBOX_app.>`): what the
// backend's reply subscription must live with (tests/jetstream/direct_test.ts, publish_test.ts).

import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { createJetStreamBucket } from "../../mod.ts";
import { startNatsServer } from "../_lib/nats_server.ts";

/**
 * Runs `fn` with a connection of that user to a private server holding the bucket `bucket`
 * describes (as `createJetStreamBucket` takes it), and closes both after.
 */
export async function withInboxUser(
  bucket: Parameters<typeof createJetStreamBucket>[1],
  fn: (nc: NatsConnection) => Promise<void>,
): Promise<void> {
  const config = `authorization { users = [ { user: "app", password: "pw", permissions: {
    publish: { allow: [">"] }, subscribe: { allow: ["_INBOX_app.>"] } } } ] }`;
  await using server = await startNatsServer({ config });
  const nc = await connect({
    servers: server.url,
    user: "app",
    pass: "pw",
    inboxPrefix: "_INBOX_app",
  });
  try {
    await createJetStreamBucket(nc, bucket);
    await fn(nc);
  } finally {
    await nc.close();
  }
}
