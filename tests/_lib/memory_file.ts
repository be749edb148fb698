// What a memory file holds on disk, for tests that read a file store's files directly (the file
// tests and the CLI tests): the history directory's name and the entry after the version record.

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
