// Reading the CLI's input: bytes from a file or standard input, decoded as strict UTF-8. Invalid
// UTF-8 is refused, never replaced with U+FFFD. Through node: modules, so the CLI runs on Node
// (the npm package's bin) as on Deno.

import { readFile } from "node:fs/promises";
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
