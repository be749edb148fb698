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
