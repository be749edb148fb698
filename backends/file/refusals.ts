// The file backend's refusals, one wording each, shared by its plain and versioned writes.

import { ExistsError, NotFoundError, StaleError, UnavailableError } from "../../store/errors.ts";
import { quote } from "../../store/text.ts";

/** A read of a key that holds nothing. */
export function notFound(key: string): NotFoundError {
  return new NotFoundError(
    `[memory:file] Cannot read memory ${quote(key)}: no memory has this key`,
    { key },
  );
}

/** A create of a key that holds a memory. */
export function exists(key: string): ExistsError {
  return new ExistsError(`[memory:file] Cannot create memory ${quote(key)}: it already exists`, {
    key,
  });
}

/** A revision-checked write the run is not entitled to; `why` ends with what to do. */
export function stale(
  key: string,
  o: { why: string; op?: "update" | "delete" },
): StaleError {
  const { why, op = "update" } = o;
  return new StaleError(`[memory:file] Cannot ${op} memory ${quote(key)}: ${why}`, { key });
}

/** A write over a name that is not a memory file. */
export function occupied(op: "create" | "update", key: string): UnavailableError {
  return new UnavailableError(
    `[memory:file] Cannot ${op} memory ${
      quote(key)
    }: its name is taken by something that is not a memory file (a directory or link); an operator must remove it`,
    { key },
  );
}

/** A key others keep writing faster than this write could look and write. */
export function churn(key: string): UnavailableError {
  return new UnavailableError(
    `[memory:file] Cannot write memory ${
      quote(key)
    }: the key kept changing under concurrent writers; try again`,
    { key },
  );
}
