// The shape check every options object goes through, a backend's (decodeOptions) or a tool's: a
// plain object whose keys are all declared, each field read exactly once, so a getter or a Proxy
// cannot answer one way when checked and another when used.

import { ConfigError } from "./errors.ts";
import { describeType, errorKind, quote } from "./text.ts";

/** `allowed options: "a", "b"`, or that there are none. */
export function allowedText(allowed: readonly string[]): string {
  return allowed.length === 0
    ? "it takes no options"
    : `allowed options: ${allowed.map((k) => quote(k)).join(", ")}`;
}

/**
 * The own fields of an options object, each read once; a field whose value is `undefined` is left
 * out. `undefined` for the whole object reads as `{}`.
 *
 * @param raw The options as given.
 * @param allowed The option names that may appear.
 * @param fail Makes the error for a problem sentence (the caller adds who is complaining).
 * @param context For a nested object: the path its option names are shown under (`"history."`)
 * and the sentence naming what it takes.
 * @throws {ConfigError} from `fail`: not an object, not a plain object (a Map, a class instance),
 * an unknown key (whatever its value), or a field that cannot be read.
 */
export function readOptionFields(
  raw: unknown,
  allowed: readonly string[],
  fail: (problem: string) => ConfigError,
  context: { readonly path?: string; readonly allowedText?: string } = {},
): Record<string, unknown> {
  if (raw === undefined) return {};
  const allowedList = context.allowedText ?? allowedText(allowed);
  const path = context.path ?? "";
  try {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      throw fail(`expected an object, got ${describeType(raw)}; ${allowedList}`);
    }
    // A Map, a Date or a class instance has no own entries to read, or not the ones it appears
    // to have: reading it as {} would silently drop the caller's settings.
    const proto = Object.getPrototypeOf(raw);
    if (proto !== Object.prototype && proto !== null) {
      throw fail(`expected a plain object, got ${instanceName(proto)}; ${allowedList}`);
    }
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(raw)) {
      if (!allowed.includes(key)) {
        throw fail(`unknown option ${quote(path + key)}; ${allowedList}`);
      }
      if (value === undefined) continue;
      // Defined, not assigned: an option named "__proto__" stays plain data.
      Object.defineProperty(out, key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    // A getter that throws, a Proxy trap, a revoked Proxy: the object cannot be read.
    throw fail(`reading the options failed (${errorKind(e)}); ${allowedList}`);
  }
}

function instanceName(proto: object): string {
  const name = Object.getOwnPropertyDescriptor(proto, "constructor")?.value?.name;
  return typeof name === "string" && /^[A-Za-z_$][\w$]{0,63}$/.test(name)
    ? `an instance of ${name}`
    : "an object with a custom prototype";
}
