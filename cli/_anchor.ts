// `check --save-anchor FILE` and `check --anchor FILE`: the anchor written atomically (mode 0600)
// with the SHA-256 of its bytes for the operator to keep elsewhere, and read back, its digest
// checked when the operator gives it (`--anchor-sha256`).

import { createHash, randomBytes } from "node:crypto";
import { rename, rm, writeFile } from "node:fs/promises";
import type { Anchor, Store } from "../mod.ts";
import { saveAnchor } from "../mod.ts";
import { decodeStrict, InputError, readBytes, unreadable } from "./_input.ts";

const ENCODER = new TextEncoder();

/** Saves `store`'s anchor to `path`; resolves its key count and the file's SHA-256. */
export async function saveAnchorFile(
  store: Store,
  path: string,
): Promise<{ keys: number; sha256: string }> {
  const anchor = await saveAnchor(store);
  const bytes = ENCODER.encode(JSON.stringify(anchor, null, 2) + "\n");
  const temp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await writeFile(temp, bytes, { mode: 0o600, flag: "wx" });
    await rename(temp, path);
  } catch (e) {
    await rm(temp, { force: true }).catch(() => {});
    throw new InputError(`Cannot write the anchor file given by --save-anchor: ${unreadable(e)}`);
  }
  return { keys: Object.keys(anchor.keys).length, sha256: sha256(bytes) };
}

/** Reads the anchor in `path`, refusing one whose SHA-256 is not `expected` (when given). */
export async function loadAnchorFile(path: string, expected?: string): Promise<Anchor> {
  const bytes = await readBytes(path, "the anchor file given by --anchor");
  if (expected !== undefined && sha256(bytes) !== expected.toLowerCase()) {
    throw new InputError(
      "The anchor file given by --anchor does not have the SHA-256 given by --anchor-sha256: it was changed since it was saved, or it is another anchor",
    );
  }
  try {
    return JSON.parse(decodeStrict(bytes, "the anchor file given by --anchor")) as Anchor;
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new InputError(
      "The anchor file given by --anchor is not JSON (check --save-anchor writes one)",
    );
  }
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
