/**
 * What a store's history keeps, one rule for every backend: at least the newest `versions` of
 * every key and every version younger than `days`; a key deleted more than `days` ago (with
 * `days` above 0) expires whole. Retention only ever cuts a key's oldest versions, in chain
 * order, and the backend records where it cut, so `check` tells a cut by retention from a
 * truncation.
 *
 * @module
 */

import { ConfigError } from "./errors.ts";
import type { HistoryRetention, HistorySetting } from "./types.ts";
import { quote } from "./text.ts";

/** What a store keeps when its options do not say: the last 64 versions and 30 days. */
export const DEFAULT_RETENTION: HistoryRetention = Object.freeze({ versions: 64, days: 30 });

/** The `history` option both backends take: off, or what to keep. */
export const HISTORY_OPTION = {
  type: ["boolean", "object"],
  fields: {
    versions: { type: "number", description: "at least this many of every key's newest versions" },
    days: { type: "number", description: "every version younger than this many days" },
  },
  description: "keep versions (default on: { versions: 64, days: 30 }); false turns it off",
} as const;

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The retention a decoded `history` option asks for; `undefined` for `false`.
 *
 * @throws {ConfigError} when `versions` is not a whole number from 1 to 1,000,000 or `days` is
 * not a number from 0 to 36,500.
 */
export function retentionOf(
  backend: string,
  option: HistorySetting | undefined,
): HistoryRetention | undefined {
  if (option === false) return undefined;
  if (option === undefined || option === true) return DEFAULT_RETENTION;
  const versions = option.versions ?? DEFAULT_RETENTION.versions;
  const days = option.days ?? DEFAULT_RETENTION.days;
  if (!Number.isSafeInteger(versions) || versions < 1 || versions > 1_000_000) {
    throw new ConfigError(
      `[memory:${backend}] Invalid options for the ${backend} backend: option "history.versions" must be a whole number from 1 to 1000000, got ${
        quote(versions)
      }`,
    );
  }
  if (!(days >= 0 && days <= 36_500)) {
    throw new ConfigError(
      `[memory:${backend}] Invalid options for the ${backend} backend: option "history.days" must be a number of days from 0 to 36500, got ${
        quote(days)
      }`,
    );
  }
  return Object.freeze({ versions, days });
}

/** What `cutCount` needs to know of a key. */
export interface CutInput {
  /** When each kept version was written (ms since the epoch), oldest first in chain order. */
  readonly ats: readonly number[];
  /** Whether the newest of them is a delete. */
  readonly deleted: boolean;
  /** Now, in ms since the epoch. */
  readonly now: number;
}

/**
 * How many of a key's oldest kept versions the retention lets go: never one of the newest
 * `versions` (unless the whole key expired), never one younger than `days`, and never one after a
 * version that must stay (clocks need not agree with the chain: a cut is always its oldest run).
 * A key deleted more than `days` ago (with `days` above 0) expires whole: every version goes.
 */
export function cutCount(retention: HistoryRetention, key: CutInput): number {
  const { ats, deleted, now } = key;
  const cutoff = now - retention.days * DAY_MS;
  const newest = ats.at(-1);
  if (deleted && retention.days > 0 && newest !== undefined && newest < cutoff) return ats.length;
  let n = 0;
  const mayGo = ats.length - retention.versions;
  while (n < mayGo && (retention.days === 0 || ats[n]! < cutoff)) n++;
  return n;
}
