// The file backend's test face: the parts its tests and the lock benchmark drive directly (the
// per-key lock, this process's lock token, the create count and its marks), so that nothing outside this folder
// imports its rooms. Not exported by mod.ts nor published as an entry: it changes with the
// backend. Node-only imports, so a lock holder runs it from source on Node and Bun too.

export {
  acquire,
  EMPTY_GRACE_MS,
  inspect,
  LOCK_WAIT_MS,
  lockPath,
  type LockState,
  release,
  withLock,
} from "./lock.ts";
export { selfToken } from "./process.ts";
export { isBookkeepingName, isSharedLockName } from "./names.ts";
export { CapacityCheck, REFRESH_MS } from "./count.ts";
export { CreateMarks, MAX_BYTES as MAX_MARK_BYTES } from "./creates.ts";
