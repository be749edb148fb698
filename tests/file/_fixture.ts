// A test over a fresh temporary memory directory (its canonical path), removed afterwards.

import { tempDir } from "../_lib/temp_dir.ts";

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

export { leftIn } from "../_lib/left_in.ts";
