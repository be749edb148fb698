// The benchmark's statistics, in one place: percentiles, medians, grouping, and the spread of
// per-trial ratios every target is judged on. (Its seeded generator is the tests' one.)

/** The `p`-th percentile (0–100) of `sorted` (ascending), nearest rank; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/** The median of the finite `values`; NaN when there are none. */
export function median(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return NaN;
  const mid = finite.length >> 1;
  return finite.length % 2 === 1
    ? finite[mid] as number
    : ((finite[mid - 1] as number) + (finite[mid] as number)) / 2;
}

/** The median, lowest and highest of per-trial ratios, and how many trials had one. */
export type Spread = { median: number; min: number; max: number; trials: number };

/** The spread of `a / b` over trials; a trial missing either side, or with `b <= 0`, is skipped. */
export function ratios(pairs: readonly (readonly (number | undefined)[])[]): Spread {
  const r = pairs.flatMap(([a, b]) => (a !== undefined && b !== undefined && b > 0 ? [a / b] : []));
  return { median: median(r), min: Math.min(...r), max: Math.max(...r), trials: r.length };
}

/** `items` grouped by `key`, groups in the order their first item came. */
export function groupBy<T>(items: readonly T[], key: (item: T) => string): T[][] {
  return [...Map.groupBy(items, key).values()];
}

/** `value` rounded to `digits` decimals. */
export function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
