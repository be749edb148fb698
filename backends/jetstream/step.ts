// The history step of every write: what the write chains to and the headers that make it its own
// version (history on, keeper.ts), or nothing to chain and at most a rollup (history off, below).
// The write paths (create.ts, update.ts, delete.ts, commit.ts) are one path either way.

import type { MsgHdrs } from "@nats-io/nats-core";
import type { Call } from "../../store/backend.ts";
import type { Deadline } from "./errors.ts";
import type { MarkerPurger } from "./markers.ts";
import type { Link, VersionRecord } from "./provenance.ts";
import type { Marker, OldMarker } from "./scan.ts";

/** A write's headers, and its version's record with history on. */
export interface Written {
  readonly headers: MsgHdrs | undefined;
  readonly record: VersionRecord | undefined;
}

/** The message a write goes over: its revision and, when the write read it, its headers. */
export interface Over {
  readonly revision: number;
  readonly header?: MsgHdrs | undefined;
}

/** What a write chains to, and whether the message it goes over is a delete marker. */
export interface Chained {
  /** `undefined` for a key's first version ever (and always with history off). */
  readonly after: Link | undefined;
  readonly overMarker: boolean;
}

/** What a new version is. */
export interface VersionInput {
  readonly key: string;
  readonly op: VersionRecord["op"];
  readonly call: Call;
  /** What it chains to (`chainAfter`'s answer). */
  readonly after: Link | undefined;
}

/** A write that landed: its headers and record, and the revision it went over (0: nothing). */
export interface Landed {
  readonly v: Written;
  readonly over: number;
}

/** What a listing met that the history step may act on. */
export interface Listed {
  readonly markers: readonly Marker[];
  readonly oldMarkers: readonly OldMarker[];
}

/** The history step of a store handle's writes. */
export interface HistoryStep {
  /** Whether writes are versions. */
  readonly on: boolean;
  /**
   * How long what a key whose subject holds nothing chains to may be used after it was read
   * (see `EMPTY_AFTER_MS` in keeper.ts).
   */
  readonly emptyLinkMs: number;
  /** Whether the newest this handle saw of `key` is a memory (a create of it looks first). */
  seenLive(key: string): boolean;
  /** What a write over `over` (none: the key's subject holds nothing) chains to. */
  chainAfter(key: string, over: Over | undefined): Promise<Chained>;
  /** The headers of a write of `entry` (empty for a delete). */
  version(v: VersionInput, entry: Uint8Array): Written;
  /** After a create or update of `key` landed at `revision`, over `over` (0: nothing). */
  wrote(key: string, w: Landed & { readonly revision: number }): void;
  /** After a delete of `key` landed, its marker at `marker`, over `over`. */
  deleted(key: string, w: Landed & { readonly marker: number }): void;
  /** A read saw `key`'s message at `revision`. */
  saw(key: string, m: Over): void;
  /** A listing met delete markers (history off: old ones are purged, within `d`). */
  listed(found: Listed, d: Deadline): Promise<void>;
  /** Forgets what it knew of every key (the bucket was replaced). */
  reset(): void;
}

const UNCHAINED: Chained = Object.freeze({ after: undefined, overMarker: false });

/** History off: nothing to chain, no version; a rollup where the bucket keeps every message. */
export class NoHistory implements HistoryStep {
  readonly on = false;
  readonly emptyLinkMs = Number.POSITIVE_INFINITY;
  readonly #rollup: (() => MsgHdrs) | undefined;
  readonly #markers: MarkerPurger;

  constructor(o: { readonly rollup: (() => MsgHdrs) | undefined; readonly markers: MarkerPurger }) {
    this.#rollup = o.rollup;
    this.#markers = o.markers;
  }

  seenLive(): boolean {
    return false;
  }

  chainAfter(): Promise<Chained> {
    return Promise.resolve(UNCHAINED);
  }

  version(v: VersionInput): Written {
    const headers = v.op === "delete" ? undefined : this.#rollup?.();
    headers?.set("Nats-Rollup", "sub");
    return { headers, record: undefined };
  }

  wrote(): void {}

  deleted(): void {}

  saw(): void {}

  listed(found: Listed, d: Deadline): Promise<void> {
    return this.#markers.purgeOld(found.oldMarkers, d);
  }

  reset(): void {}
}
