// What a power-cut workload writes: every (key, version) has one exact entry, so a checker can
// tell from the bytes it reads back which write they came from, and whether they are whole.

/**
 * The history every store of the run keeps: the default's 64 versions of each key, but none kept
 * for its age alone, so that a long run's store stays the size of a real one.
 */
export const HISTORY = { versions: 64, days: 0 } as const;

/** The entry a workload writes as `version` of `key`. */
export function entryFor(key: string, version: number): { description: string; content: string } {
  let h = 2166136261;
  for (const c of `${key}#${version}`) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
  const next = () => (h = (Math.imul(h, 1103515245) + 12345) >>> 0);
  // Mostly a few KiB; one write in ten close to the 64 KiB limit, so it spans many FUSE writes.
  const length = next() % 10 === 0 ? 40_000 + next() % 24_000 : next() % 6_000;
  const chars: string[] = [`${key} v${version}\n`];
  for (let i = 0; i < length; i++) chars.push(String.fromCharCode(32 + (next() >>> 8) % 95));
  return { description: `${key} version ${version}`, content: chars.join("") };
}

/** The version an entry says it is, from its description; `undefined` when it says none. */
export function versionOf(key: string, description: string): number | undefined {
  const m = /^(\S+) version (\d+)$/.exec(description);
  return m !== null && m[1] === key ? Number(m[2]) : undefined;
}
