/**
 * The hard limits every backend enforces.
 *
 * @module
 */

/** The longest legal key, in runes (keys are ASCII, so also bytes). */
export const MAX_KEY_RUNES = 200;

/** The longest description, in Unicode code points, after normalization. */
export const MAX_DESCRIPTION_RUNES = 500;

/** The largest body, in UTF-8 bytes (64 KiB). */
export const MAX_CONTENT_BYTES = 65_536;

/** The most memories one store holds; `create` beyond it fails with `CapacityError`. */
export const MAX_ENTRIES = 1_024;

/**
 * The most bytes a serialized entry (header and body) can take: the content cap, plus twice the
 * description budget in bytes (500 runes of at most 4 bytes, which YAML may quote and escape),
 * plus 64 bytes of header framing. A property test proves no valid entry serializes larger.
 */
export const MAX_ENTRY_BYTES: number = MAX_CONTENT_BYTES + 2 * (MAX_DESCRIPTION_RUNES * 4) + 64;
