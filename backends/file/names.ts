// How keys map to names in a memory directory.

import { validateKey } from "../../store/validate.ts";

/** What a key's file name ends with. */
export const SUFFIX = ".md";
/** What a temp file's name ends with (it also starts with a dot, so it is never a key). */
export const TEMP_SUFFIX = ".tmp";

/** The key a file name stands for, or `undefined` for a name that is not a legal key's file. */
export function keyOf(name: string): string | undefined {
  if (!name.endsWith(SUFFIX) || name.charCodeAt(0) === 0x2e) return undefined;
  try {
    return validateKey(name.slice(0, -SUFFIX.length));
  } catch {
    return undefined;
  }
}
