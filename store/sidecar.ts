// A backend's sidecar: small records kept beside its memories, by key, in named spaces (the
// search's vector cache is one), never listed, never counted against the entry limit and never
// part of history. A cache, not data: a record may be lost (a race, a damaged file) and is then
// made again by whoever needs it. Optional: a backend without one offers none.

import type { SidecarChange } from "./backend.ts";

export type { SidecarChange, SidecarOps } from "./backend.ts";
import type { CallOptions, Store } from "./types.ts";
import { extensionsOf, runCall } from "./build.ts";

/** What a space may be named: 1 to 64 of `A-Z a-z 0-9 _ -`. */
export const SIDECAR_SPACE = /^[A-Za-z0-9_-]{1,64}$/;

/** The sidecar of `store`, as calls that run like store calls (span, abort, error wording). */
export interface StoreSidecar {
  read(space: string, opts?: CallOptions): Promise<Map<string, Uint8Array>>;
  /** `undefined` on a read-only view: it keeps what it makes to itself. */
  readonly update?: (space: string, change: SidecarChange, opts?: CallOptions) => Promise<void>;
}

/** The sidecar of a store built by this library whose backend keeps one, else `undefined`. */
export function sidecarOf(store: Store): StoreSidecar | undefined {
  const ext = extensionsOf(store);
  const ops = ext?.ops.sidecar;
  if (ext === undefined || ops === undefined) return undefined;
  const read = (space: string, opts?: CallOptions) =>
    runCall(ext.backend, "sidecar", opts, () => undefined, (c) => ops.read(space, c));
  if (ext.readOnly) return { read };
  return {
    read,
    update: (space, change, opts) =>
      runCall(ext.backend, "sidecar", opts, () => undefined, (c) => ops.update(space, change, c)),
  };
}
