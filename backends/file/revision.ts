// Revisions and scope namespaces of the file backend.
//
// A revision identifies the stored entry: the first 48 bits of the SHA-256 of its bytes (the
// entry, not the version record in front of it), a safe integer that a Scope snapshot carries
// through JSON like a jetstream sequence number. Writing the same entry again gives the same
// revision, so a run that read it may overwrite it: what it read is exactly what is stored,
// whatever happened in between (the history keeps what did), and no write it did not see is lost.
// (Anthropic's managed memory stores use the same content-hash precondition.)
//
// The namespace names one directory instance, by device, inode, birth time and canonical path,
// so a revision read in one directory never authorizes a write in another, nor in a directory
// deleted and made again (or restored from a backup) under the same path.

import { createHash } from "node:crypto";
import { dirIdentity } from "./fs.ts";

/** The revision of an entry's bytes (a file's, after its record line): never 0. */
export function revisionOf(bytes: Uint8Array): number {
  const hex = createHash("sha256").update(bytes).digest("hex");
  return parseInt(hex.slice(0, 12), 16) || 1;
}

/** The Scope namespace of the directory at `root` (a canonical path). */
export function namespaceOf(root: string): string {
  const id = dirIdentity(root);
  const text = `${id?.dev}:${id?.ino}:${id?.birth}:${root}`;
  return `file:${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
}
