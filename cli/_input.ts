// Reading the CLI's input: bytes from a file or standard input, decoded as strict UTF-8. Invalid
// UTF-8 is refused, never replaced with U+FFFD.

/** Input the CLI cannot use (unreadable, not UTF-8): exit status 1. */
export class InputError extends Error {
  override name = "InputError";
}

const STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Reads a file's bytes; a file that cannot be read is an `InputError` naming the option. */
export async function readBytes(path: string, what: string): Promise<Uint8Array> {
  try {
    return await Deno.readFile(path);
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound
      ? "it does not exist"
      : e instanceof Deno.errors.PermissionDenied
      ? "permission denied"
      : e instanceof Deno.errors.IsADirectory
      ? "it is a directory"
      : "it cannot be read";
    throw new InputError(`Cannot read ${what}: ${why}`);
  }
}

/** Reads all of standard input. */
export async function readStdinBytes(): Promise<Uint8Array> {
  return new Uint8Array(await new Response(Deno.stdin.readable).arrayBuffer());
}

/** Where the first invalid UTF-8 sequence in `bytes` is: 1-based line and byte in that line. */
export function invalidUtf8At(bytes: Uint8Array): { line: number; byte: number } | undefined {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i <= bytes.length; i++) {
    try {
      if (i === bytes.length) decoder.decode();
      else decoder.decode(bytes.subarray(i, i + 1), { stream: true });
    } catch {
      return { line, byte: Math.min(i, bytes.length - 1) - lineStart + 1 };
    }
    if (bytes[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return undefined;
}

/**
 * Decodes strict UTF-8.
 *
 * @throws {InputError} naming `what` and where the first invalid byte is.
 */
export function decodeStrict(bytes: Uint8Array, what: string): string {
  try {
    return STRICT.decode(bytes);
  } catch {
    const at = invalidUtf8At(bytes);
    throw new InputError(
      `${what} is not valid UTF-8${
        at === undefined ? "" : ` (line ${at.line}, byte ${at.byte})`
      }; invalid text is refused, never replaced`,
    );
  }
}

/** Reads a file as strict UTF-8. */
export async function readUtf8File(path: string, what: string): Promise<string> {
  return decodeStrict(await readBytes(path, what), what);
}
