// A test over a fresh temporary memory directory (its canonical path), removed afterwards.

/** Registers `fn` as a test that gets a new empty directory. */
export function fileTest(name: string, fn: (dir: string) => Promise<void>): void {
  Deno.test({
    name,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const dir = await Deno.makeTempDir({ prefix: "agentmem-test-" });
      try {
        await fn(await Deno.realPath(dir));
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

/** The name of the store's own history directory inside a memory directory. */
export const HISTORY_DIR = ".history";

const RECORD_PREFIX = new TextEncoder().encode("agentmem-version ");

/**
 * What a memory file holds after its version record line: the entry, byte for byte. With history
 * on (the default) every memory file starts with that line; without it the file is the entry.
 */
export function entryOf(file: Uint8Array): Uint8Array {
  const recorded = RECORD_PREFIX.every((b, i) => file[i] === b);
  return recorded ? file.subarray(file.indexOf(0x0a) + 1) : file;
}

/** `entryOf` for a file read as text. */
export function entryTextOf(file: string): string {
  return file.startsWith("agentmem-version ") ? file.slice(file.indexOf("\n") + 1) : file;
}
