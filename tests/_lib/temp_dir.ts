// The one temporary-directory helper of the tests: a fresh directory under the system's temp
// directory, by its canonical path, removed with everything in it by `await using`.

/** A temporary directory; disposing of it removes it (and does not mind if it is gone). */
export interface TempDir extends AsyncDisposable {
  /** Its canonical path (symlinks resolved). */
  readonly path: string;
  /** Removes the directory and everything in it. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Makes a fresh empty directory named `<prefix><random>`. */
export async function tempDir(prefix = "agentmem-test-"): Promise<TempDir> {
  const path = await Deno.realPath(await Deno.makeTempDir({ prefix }));
  return {
    path,
    [Symbol.asyncDispose]: async () => {
      try {
        await Deno.remove(path, { recursive: true });
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
    },
  };
}

/** Runs `fn` in a fresh temp directory (`<prefix><random>`), removed afterwards whatever it does. */
export async function inTempDir<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  await using tmp = await tempDir(prefix);
  return await fn(tmp.path);
}
