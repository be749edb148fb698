// What a file store's directory holds beyond the store's own: for tests that check a call or a
// process left nothing behind.

import { isBookkeepingName, isSharedLockName, selfToken } from "../../backends/file/testing.ts";

/**
 * The names in memory directory `dir` but `keep` and the store's bookkeeping (its history, its
 * create marks, this process's shared lock file); another process's shared lock file counts as
 * left behind until a sweep removes it.
 */
export function leftIn(dir: string, keep: readonly string[] = []): string[] {
  const own = (n: string) =>
    isBookkeepingName(n) && (!isSharedLockName(n) || n.includes(`.${selfToken()}.`));
  return [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => !keep.includes(n) && !own(n))
    .sort();
}
