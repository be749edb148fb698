// A look's headers read on demand (backends/jetstream/header_view.ts) answer every lookup as the
// client's decoded headers do, and a header block the client refuses to decode is refused the same
// way. No server: the messages are made as the client (nats-core 3.4) keeps them.

import assert from "node:assert/strict";
import { MsgHdrsImpl } from "@nats-io/nats-core";
import type { Msg } from "@nats-io/nats-core";
import { headerView, rawHeaders } from "../../backends/jetstream/testing.ts";

const ENCODER = new TextEncoder();

// A message shaped as the client's: its header bytes then its data, `hdr` the headers' length.
function message(headerText: string | undefined, data = "body"): Msg {
  const head = headerText === undefined ? new Uint8Array(0) : ENCODER.encode(headerText);
  const rdata = new Uint8Array([...head, ...ENCODER.encode(data)]);
  const hdr = headerText === undefined ? -1 : head.length;
  return {
    _msg: { hdr },
    _rdata: rdata,
    get headers() {
      return hdr < 0 ? undefined : MsgHdrsImpl.decode(rdata.subarray(0, hdr));
    },
  } as unknown as Msg;
}

const NAMES = [
  "Nats-Sequence",
  "Nats-Subject",
  "Nats-Time-Stamp",
  "KV-Operation",
  "KV-Op",
  "Nats-Marker-Reason",
  "Agentmem-Op",
  "Agentmem-Format",
  "agentmem-op",
  "X-Mark",
  "Missing",
];

const BLOCKS = [
  "NATS/1.0\r\n\r\n",
  "NATS/1.0 404 Message Not Found\r\n\r\n",
  "NATS/1.0 408 Request Timeout\r\n\r\n",
  "NATS/1.0 503\r\n\r\n",
  "NATS/1.0   \r\n\r\n",
  "NATS/1.0 abc\r\n\r\n",
  "NATS/1.0\r\nNats-Stream: KV_b\r\nNats-Subject: $KV.b.k\r\nNats-Sequence: 42\r\n" +
  "Nats-Time-Stamp: 2026-12-05T15:00:00.123456789Z\r\nAgentmem-Format: 2\r\nAgentmem-Op: update\r\n\r\n",
  // A marker, values padded, a name that starts another, a name only inside a value.
  "NATS/1.0\r\nKV-Op: PUT\r\nKV-Operation:   DEL  \r\nX-Note: Nats-Sequence: 9\r\n" +
  "Nats-Sequence:7\r\n\r\n",
  // Duplicates: `get` takes the first, `last` the last; an empty value is still present.
  "NATS/1.0\r\nX-Mark: a\r\nX-Mark: b\r\nNats-Sequence: 1\r\nNats-Sequence: 2\r\nMissing-Not:\r\n" +
  "Agentmem-Format:\r\n\r\n",
  // Names differ by case only: each is its own header.
  "NATS/1.0\r\nagentmem-op: create\r\nNats-Marker-Reason: MaxAge\r\n\r\n",
  // A line without a colon is skipped; so is an empty one in the middle.
  "NATS/1.0\r\nno colon here\r\n\r\nX-Mark: after\r\n\r\n",
  // Without the final blank line.
  "NATS/1.0\r\nNats-Sequence: 5",
  "NATS/1.0 404 Message Not Found",
];

// What the client refuses to decode.
const UNDECODABLE = [
  "NATS/1.0\r\nX-Mark: a\nb\r\n\r\n",
  "NATS/1.0\r\nX-Mark: a\rb\r\n\r\n",
  "NATS/1.0\r\nX Mark: a\r\n\r\n",
  "NATS/1.0\r\nX-Märk: a\r\n\r\n",
  "NATS/1.0\r\n\tX-Mark: a\r\n\r\n",
];

function shown(h: { get(n: string): string; last(n: string): string; has(n: string): boolean }) {
  return NAMES.map((n) => [n, h.get(n), h.last(n), h.has(n)]);
}

Deno.test("a header view answers every lookup as the client's decoded headers", () => {
  for (const block of BLOCKS) {
    const m = message(block);
    const view = headerView(m)!;
    const decoded = m.headers!;
    // Read from the bytes, not through the client's decoding.
    assert.ok(!(view instanceof MsgHdrsImpl), JSON.stringify(block));
    assert.equal(view.code, decoded.code, JSON.stringify(block));
    assert.deepEqual(shown(view), shown(decoded), JSON.stringify(block));
  }
});

Deno.test("a header block the client refuses is refused by a header view too", () => {
  for (const block of UNDECODABLE) {
    assert.throws(() => message(block).headers, JSON.stringify(block));
    assert.throws(() => headerView(message(block)), JSON.stringify(block));
  }
});

Deno.test("a message without headers has none; one of another shape is read by the client", () => {
  assert.equal(headerView(message(undefined)), undefined);
  assert.equal(rawHeaders(message(undefined)), null);
  const block = "NATS/1.0\r\nNats-Sequence: 3\r\n\r\n";
  const decoded = MsgHdrsImpl.decode(ENCODER.encode(block));
  const other = { headers: decoded, data: new Uint8Array(0) } as unknown as Msg;
  assert.equal(rawHeaders(other), undefined);
  assert.equal(headerView(other), decoded);
});
