// Searching a file store's directory for a planted marker, as the redaction tests prove bytes
// gone: every file under it, dot names and folders included. node:fs only, so the suite's Node and
// Bun runs search as Deno's do.

import { readdir, readFile } from "node:fs/promises";

const ENCODER = new TextEncoder();

/** Every file under `dir` (recursively, dot names included) whose bytes hold `marker`. */
export async function fileHits(dir: string, marker: string | Uint8Array): Promise<string[]> {
  const want = typeof marker === "string" ? ENCODER.encode(marker) : marker;
  const out: string[] = [];
  const walk = async (path: string, rel: string) => {
    for (const e of await readdir(path, { withFileTypes: true })) {
      const p = `${path}/${e.name}`;
      const r = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) await walk(p, r);
      else if (e.isFile() && holds(new Uint8Array(await readFile(p)), want)) out.push(r);
    }
  };
  await walk(dir, "");
  return out.sort();
}

/** Whether `bytes` hold `want` anywhere. */
export function holds(bytes: Uint8Array, want: Uint8Array): boolean {
  outer: for (let i = 0; i + want.length <= bytes.length; i++) {
    for (let j = 0; j < want.length; j++) if (bytes[i + j] !== want[j]) continue outer;
    return true;
  }
  return false;
}
