// Reading the CLI's input: bytes from a file or standard input, whole or line by line with a
// limit, decoded as strict UTF-8 (invalid UTF-8 is refused, never replaced with U+FFFD). Through
// node: modules, so the CLI runs on Node (the npm package's bin) as on Deno.

import { open, readFile } from "node:fs/promises";
import process from "node:process";

/** Input the CLI cannot use (unreadable, not UTF-8): exit status 1. */
export class InputError extends Error {
  override name = "InputError";
}

const STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Reads a file's bytes; a file that cannot be read is an `InputError` naming the option. */
export async function readBytes(path: string, what: string): Promise<Uint8Array> {
  try {
    return await readFileBytes(path);
  } catch (e) {
    throw new InputError(`Cannot read ${what}: ${unreadable(e)}`);
  }
}

/** A file's bytes, as a plain Uint8Array (Node's Buffer is one, but prints differently). */
export async function readFileBytes(path: string): Promise<Uint8Array> {
  const b = await readFile(path);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** A raw error's code (`ENOENT`) or class name (`TypeError`), never its text. */
export function failureKind(e: unknown): string {
  const code = e instanceof Error ? (e as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : e instanceof Error ? e.name : typeof e;
}

/** Why a file could not be read, in a few words; never its path. */
export function unreadable(e: unknown): string {
  const kind = failureKind(e);
  return kind === "ENOENT" || kind === "NotFound"
    ? "it does not exist"
    : kind === "EACCES" || kind === "EPERM" || kind === "PermissionDenied" || kind === "NotCapable"
    ? "permission denied"
    : kind === "EISDIR" || kind === "IsADirectory"
    ? "it is a directory"
    : "it cannot be read";
}

/** A line longer than a reader takes: its 1-based number and the limit in bytes. */
export class LineTooLongError extends InputError {
  override name = "LineTooLongError";
  constructor(readonly line: number, readonly limit: number) {
    super(`line ${line} is longer than ${limit} bytes`);
  }
}

const CHUNK_BYTES = 65_536;

/**
 * A file's bytes as they are read, a chunk at a time; a file that cannot be opened (or is a
 * directory) is an `InputError` naming `what`.
 */
export async function openInput(path: string, what: string): Promise<AsyncIterable<Uint8Array>> {
  let handle;
  try {
    handle = await open(path, "r");
    if ((await handle.stat()).isDirectory()) {
      throw Object.assign(new Error("a directory"), { code: "EISDIR" });
    }
  } catch (e) {
    await handle?.close();
    throw new InputError(`Cannot read ${what}: ${unreadable(e)}`);
  }
  const file = handle;
  return (async function* () {
    try {
      for (;;) {
        const buf = new Uint8Array(CHUNK_BYTES);
        const { bytesRead } = await file.read(buf, 0, CHUNK_BYTES, null);
        if (bytesRead === 0) return;
        yield buf.subarray(0, bytesRead);
      }
    } finally {
      await file.close();
    }
  })();
}

/** Standard input's bytes as they come. */
export function stdinChunks(): AsyncIterable<Uint8Array> {
  return process.stdin as AsyncIterable<Uint8Array>;
}

/**
 * The lines of `input`, each as its bytes without the newline, read as they come (the last one
 * also when it has no newline). Holds one line at a time: at the chunk that takes a line past
 * `maxBytes` it stops reading and throws `LineTooLongError`.
 *
 * @throws {InputError} when the input cannot be read.
 */
export async function* readLines(
  input: AsyncIterable<Uint8Array>,
  maxBytes: number,
): AsyncGenerator<Uint8Array> {
  let parts: Uint8Array[] = [];
  let held = 0;
  let line = 1;
  const take = (): Uint8Array => {
    const whole = parts.length === 1 ? parts[0]! : concat(parts, held);
    parts = [];
    held = 0;
    line++;
    return whole;
  };
  const chunks = input[Symbol.asyncIterator]();
  try {
    for (;;) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await chunks.next();
      } catch (e) {
        throw new InputError(`Cannot read the input: ${unreadable(e)}`);
      }
      if (next.done) break;
      let bytes = next.value;
      for (let nl = bytes.indexOf(0x0a);; nl = bytes.indexOf(0x0a)) {
        const end = nl < 0 ? bytes.length : nl;
        if (held + end > maxBytes) throw new LineTooLongError(line, maxBytes);
        if (end > 0) {
          // A copy: a reader may reuse the chunk it handed out.
          parts.push(bytes.slice(0, end));
          held += end;
        }
        if (nl < 0) break;
        yield take();
        bytes = bytes.subarray(nl + 1);
      }
    }
    yield take();
  } finally {
    // Stop reading: the file is closed, standard input left unread.
    await chunks.return?.().catch(() => {});
  }
}

function concat(parts: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Reads all of standard input. */
export async function readStdinBytes(): Promise<Uint8Array> {
  // process.stdin yields Uint8Array chunks (Buffers on Node), which a Response collects.
  const chunks = ReadableStream.from(process.stdin as AsyncIterable<Uint8Array>);
  return new Uint8Array(await new Response(chunks).arrayBuffer());
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
