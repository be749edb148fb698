// Purging old delete markers of a bucket that keeps one message per key (history off): a marker
// older than `MARKERS.purgeAfterMs` is removed by the next listing or count that meets it, so
// churn never piles them up (see MARKERS in scan.ts for why they wait).

import { quote } from "../../store/text.ts";
import { isPermissionDenied } from "./bind.ts";
import { apiCode, type Deadline, PREFIX, reason } from "./errors.ts";
import type { OldMarker } from "./scan.ts";
import { purgeMarker, type WriteTarget } from "./write.ts";

/** Where the purges go, and who hears that they were refused. */
export interface PurgeTarget extends WriteTarget {
  readonly bucket: string;
  readonly timeout: number;
  /** Told once when a purge is refused after all and old markers are kept from then on. */
  readonly warn: (message: string) => void;
}

/** One store's purges of old markers: on while the server allows them. */
export class MarkerPurger {
  readonly #t: PurgeTarget;
  #purge: boolean;

  constructor(t: PurgeTarget, purge: boolean) {
    this.#t = t;
    this.#purge = purge;
  }

  /**
   * Purges delete markers old enough to go, a few at a time and within the call's deadline, so
   * churn leaves nothing to scan past for long.
   */
  async purgeOld(markers: readonly OldMarker[], d: Deadline): Promise<void> {
    for (let i = 0; i < markers.length && this.#purge && !d.cancelled; i += 16) {
      await Promise.all(markers.slice(i, i + 16).map((m) => this.#purgeMarker(m)));
    }
  }

  // Removes a delete marker (and anything older under its subject; a write made after it has a
  // higher sequence and stays). The delete already happened: a purge that fails leaves the
  // marker, which every call treats as absent.
  async #purgeMarker(m: OldMarker): Promise<void> {
    if (!this.#purge) return;
    try {
      await purgeMarker(this.#t, m);
    } catch (e) {
      // Refused for good (no permission, or the stream denies purges): fall back to markers,
      // and say so once. A timeout or a lost connection just leaves this one marker.
      const denied = isPermissionDenied(e);
      // Purges run a few at once: the first refusal says so, the others are quiet.
      if ((denied || apiCode(e) !== undefined) && this.#purge) {
        this.#purge = false;
        const t = this.#t;
        t.warn(
          `${PREFIX} Memory bucket ${quote(t.bucket)}: ${
            denied
              ? `this NATS user may not purge the bucket's stream (grant publish permission on $JS.API.STREAM.PURGE.${t.stream})`
              : `the server refused to purge the bucket's stream (${
                reason(e, t.bucket, `${t.timeout} ms`)
              })`
          }, so delete markers are now kept for good, which slows listing as they accumulate`,
        );
      }
    }
  }
}
