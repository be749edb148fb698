// A run's budget: how many writes (creates and updates) and deletes it may make, and how many it
// has made. One counter per run, shared by the scopes made for its commands, so no path of the
// run escapes it. A call takes its unit before storage is touched and gives it back when it
// wrote nothing; a call whose outcome is unknown (the backend failed) keeps it.

import { BudgetError, type BudgetKind, ConfigError, MemoryError } from "./errors.ts";
import { describeType, quote } from "./text.ts";

/** How many writes and deletes a run may make; a kind left out is not limited. */
export interface Budget {
  /** Creates and updates (a held proposal of one counts). */
  readonly writes?: number;
  /** Deletes (a held proposal of one counts). */
  readonly deletes?: number;
}

/** How many writes and deletes a run has made. */
export interface BudgetUsed {
  /** Creates and updates made (a held proposal of one counts). */
  readonly writes: number;
  /** Deletes made (a held proposal of one counts). */
  readonly deletes: number;
}

const KINDS: readonly BudgetKind[] = ["writes", "deletes"];

/** One run's counter. */
export class BudgetCounter {
  readonly limits: Budget;
  readonly #used: { writes: number; deletes: number };

  constructor(limits: Budget, used: BudgetUsed = { writes: 0, deletes: 0 }) {
    this.limits = Object.freeze({ ...limits });
    this.#used = { ...used };
  }

  get used(): BudgetUsed {
    return { ...this.#used };
  }

  /** How many more of `kind` the run may make (`Infinity` when not limited). */
  left(kind: BudgetKind): number {
    const limit = this.limits[kind];
    return limit === undefined ? Infinity : Math.max(0, limit - this.#used[kind]);
  }

  /**
   * Takes one unit of `kind` for the call `what` ("[memory:file] Cannot create memory \"x\"")
   * and returns the refund, or throws `BudgetError` when none is left.
   */
  take(kind: BudgetKind, what: string, key: string | undefined): () => void {
    const limit = this.limits[kind];
    if (limit !== undefined && this.#used[kind] >= limit) {
      throw new BudgetError(
        `${what}: this run has used its ${limit} ${unit(kind, limit)} (its scope's budget); ` +
          `nothing was ${kind === "deletes" ? "deleted" : "written"}`,
        { kind, limit, key },
      );
    }
    this.#used[kind]++;
    let refunded = false;
    return () => {
      if (refunded) return;
      refunded = true;
      this.#used[kind]--;
    };
  }
}

function unit(kind: BudgetKind, n: number): string {
  return n === 1 ? kind.slice(0, -1) : kind;
}

/**
 * Checks a budget: a plain object of `writes` and `deletes`, each a whole number of at least 0.
 * Returns the budget, or the reason it is none (`label` names the value: `option "budget"`).
 */
export function readBudget(value: unknown, label: string): Budget | string {
  const shape = "it takes { writes?, deletes? }, each a whole number of at least 0";
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return `${label} must be an object, got ${describeType(value)}; ${shape}`;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    return `${label} must be a plain object; ${shape}`;
  }
  const out: { writes?: number; deletes?: number } = {};
  for (const [name, n] of Object.entries(value)) {
    if (!(KINDS as readonly string[]).includes(name)) {
      return `${label} has the unknown field ${quote(name)}; ${shape}`;
    }
    if (n === undefined) continue;
    if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
      return `${label} field ${quote(name)} must be a whole number of at least 0 (0 allows ` +
        `none), got ${typeof n === "number" ? String(n) : describeType(n)}`;
    }
    out[name as BudgetKind] = n;
  }
  return out;
}

/** `readBudget` for a constructor: a `ConfigError` starting "Cannot <action>: ". */
export function checkBudget(action: string, value: unknown): Budget {
  const budget = readBudget(value, 'option "budget"');
  if (typeof budget === "string") throw new ConfigError(`Cannot ${action}: ${budget}`);
  return budget;
}

/**
 * Runs `fn`, one write or delete of a run whose budget is `counter`, charged to it: refused
 * before `fn` runs when none is left; given back when `fn` wrote nothing (a `MemoryError` other
 * than `UnavailableError`, whose write may have landed, or a result `wrote` says changed nothing).
 */
export async function charged<T>(
  counter: BudgetCounter | undefined,
  charge: { readonly kind: BudgetKind; readonly what: string; readonly key: string | undefined },
  fn: () => Promise<T>,
  wrote: (result: T) => boolean = () => true,
): Promise<T> {
  if (counter === undefined) return await fn();
  const refund = counter.take(charge.kind, charge.what, charge.key);
  try {
    const result = await fn();
    if (!wrote(result)) refund();
    return result;
  } catch (e) {
    if (e instanceof MemoryError && e.code !== "unavailable") refund();
    throw e;
  }
}
