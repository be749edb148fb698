// What the conformance suite (tests/conformance.ts) and its parts hand each case: a fresh store.

import type { Store } from "../../mod.ts";

/** A fresh, empty store and how to dispose of it. */
export interface Fixture {
  readonly store: Store;
  /** A second store over the same keyspace, as another process would open it. */
  readonly peer: () => Promise<Store>;
  /** Stores raw bytes under a key, bypassing the library (a hand edit, a damaged entry). */
  readonly plant: (key: string, bytes: Uint8Array) => Promise<void>;
  readonly cleanup: () => Promise<void>;
}
