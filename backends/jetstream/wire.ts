// What a write of the jetstream backend puts on the wire, and how big a bucket's values must be
// to take it.

import { MAX_ENTRY_BYTES } from "../../store/limits.ts";
import { VERSION_HEADER_BYTES, VERSION_HEADER_BYTES_FORMAT_1 } from "./provenance.ts";

/**
 * The most header bytes a revision-checked write carries. The server counts headers against a
 * bucket's max value size. A conditional write sends `Nats-Expected-Last-Subject-Sequence: <n>`,
 * which takes 51 bytes plus the digits of `n` on the wire (measured against nats-server 2.9.10:
 * "NATS/1.0", the header line and the CRLFs). Revisions pass through JavaScript numbers, exact up
 * to 2^53 - 1, which has 16 digits; the backend refuses to work past that revision.
 */
export const MAX_WRITE_HEADER_BYTES = 51 + String(Number.MAX_SAFE_INTEGER).length;

/**
 * The extra bytes of `Nats-Expected-Last-Sequence: <n>\r\n`, which a create adds when it relies
 * on its capacity bound (see `capacity.ts`). It is sent only when the value still fits
 * the bucket's max value size with it, so it never raises the size a bucket must allow.
 */
export const STREAM_SEQUENCE_HEADER_BYTES = 31 + String(Number.MAX_SAFE_INTEGER).length;

/**
 * The smallest positive max value size a bucket may have for a store with history off: the
 * largest serialized entry (`MAX_ENTRY_BYTES`) plus the largest header a write carries (67 bytes).
 * A bucket whose max value size is unlimited (-1) or at least this accepts every valid entry
 * through `create` and `update` of such a store.
 */
export const JETSTREAM_MIN_VALUE_SIZE: number = MAX_ENTRY_BYTES + MAX_WRITE_HEADER_BYTES;

/** The rollup header a write with history off carries in a bucket that keeps every message. */
export const ROLLUP_HEADER_BYTES = "Nats-Rollup: sub\r\n".length;

/**
 * The smallest positive max value size a bucket may have for a store with history on (the
 * default, and what `agentmem bucket init` makes): `JETSTREAM_MIN_VALUE_SIZE` plus the headers that
 * make a write its own version (`VERSION_HEADER_BYTES`).
 */
export const JETSTREAM_HISTORY_MIN_VALUE_SIZE: number = JETSTREAM_MIN_VALUE_SIZE +
  VERSION_HEADER_BYTES;

/**
 * What `agentmem bucket init` made before chain format 2 added its format and sequence headers: a
 * bucket that small still opens (a warning names the command that raises it), and refuses only
 * the few writes whose entry and provenance are both near their limits.
 */
export const LEGACY_HISTORY_MIN_VALUE_SIZE: number = JETSTREAM_MIN_VALUE_SIZE +
  VERSION_HEADER_BYTES_FORMAT_1;

/** The header that marks a KV delete. */
export const KV_OPERATION = "KV-Operation";

/**
 * The name of the anchor, a message `agentmem bucket init` writes first into a new bucket
 * (`$KV.<bucket>.~agentmem`, not a legal key, so no listing shows it) and nothing ever removes:
 * with it first in the stream, every purge a delete makes is durable (see `mover.ts`).
 */
export const ANCHOR_NAME = "~agentmem";
