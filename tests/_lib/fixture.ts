// What the conformance suite (tests/conformance.ts) and its parts hand each case: a fresh store.

import type { HistorySetting, ReviewMode, Store } from "../../mod.ts";

/** A fresh, empty store and how to dispose of it. */
export interface Fixture {
  readonly store: Store;
  /** A second store over the same keyspace, as another process would open it. */
  readonly peer: () => Promise<Store>;
  /** Stores raw bytes under a key, bypassing the library (a hand edit, a damaged entry). */
  readonly plant: (key: string, bytes: Uint8Array) => Promise<void>;
  readonly cleanup: () => Promise<void>;
  /**
   * Another store over the same keyspace, opened with the fixture's options and `options`
   * (`review`, say). Without it, the cases that need it do not run.
   */
  readonly reopen?: (options: ReopenOptions) => Promise<Store>;
  /**
   * Where the store's raw storage (every file of the directory, every message of the bucket's
   * streams) holds `marker`, by name; none when nowhere. Without it, the redaction cases do not
   * run.
   */
  readonly rawHits?: (marker: string | Uint8Array) => Promise<string[]>;
  /** Whether the store enforces read-before-update (set by the suite). */
  readonly enforcesReadBeforeUpdate?: boolean;
}

/** What `Fixture.reopen` may add to a store's options. */
export interface ReopenOptions {
  readonly review?: ReviewMode | undefined;
  readonly history?: HistorySetting | undefined;
}
