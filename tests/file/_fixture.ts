// A test over a fresh temporary memory directory (its canonical path), removed afterwards.

import { tempDir } from "../_lib/temp_dir.ts";
import { isSharedLockName, selfToken } from "../../backends/file/testing.ts";

const HISTORY_DIR = ".history";
const CREATES_NAME = ".creates";

/** Registers `fn` as a test that gets a new empty directory. */
export function fileTest(name: string, fn: (dir: string) => Promise<void>): void {
  Deno.test({
    name,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      await using dir = await tempDir();
      await fn(dir.path);
    },
  });
}

/**
 * The names in a memory directory but `keep`, the history, the create marks and this process's
 * own shared lock file (other processes' shared lock files are left behind until a sweep).
 */
export function leftIn(dir: string, keep: readonly string[] = []): string[] {
  const own = (n: string) =>
    n === HISTORY_DIR || n === CREATES_NAME ||
    (isSharedLockName(n) && n.includes(`.${selfToken()}.`));
  return [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => !keep.includes(n) && !own(n))
    .sort();
}
