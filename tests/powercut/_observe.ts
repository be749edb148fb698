// After a cut and a remount: what every key of the run holds, seen four ways (the directory itself,
// `read()`, `list()` and `auditStore`, and now and then the `agentmem check` CLI as a process),
// and whether the four agree.

import { auditStore, CorruptError, NotFoundError, type Store } from "../../mod.ts";
import { ROOT_CONFIG } from "../_lib/deno_child.ts";
import { spawnDeno } from "../_lib/spawn.ts";
import { entryFor, versionOf } from "./_content.ts";
import type { KeyValue } from "./_model.ts";

const CLI = new URL("../../cli.ts", import.meta.url).pathname;
/** Where the file backend keeps every key's versions, beside the keys. */
const HISTORY_DIR = ".history";

/** What one key holds: a whole version, nothing, or something torn (empty, half-written, wrong). */
export type Found = { value: KeyValue } | { torn: string };

/** What the store directory holds after a cut. */
export interface Observation {
  readonly keys: Map<string, Found>;
  /** Names of the directory that are neither a key of the run nor a temp file or a lock. */
  readonly strangers: string[];
  /** Temp files, locks and pending deletes left by the killed writers (invisible). */
  readonly leftovers: number;
  /** Where `list()`, `read()`, the audit or the CLI disagree. */
  readonly disagreements: string[];
  /** What the audit (`agentmem check`'s) finds wrong in the kept versions, by key. */
  readonly historyProblems: { key: string; text: string }[];
}

/** Looks at every key in `keys` through `store` (opened on `dir`) and the directory itself. */
export async function observe(
  store: Store,
  dir: string,
  keys: readonly string[],
  withCli: boolean,
): Promise<Observation> {
  const names = new Set<string>();
  for (const e of Deno.readDirSync(dir)) names.add(e.name);
  const ours = new Set(keys.map((k) => `${k}.md`));
  const strangers: string[] = [];
  let leftovers = 0;
  for (const n of names) {
    // The history and the create marks are the store's own (a shared lock file is a temp file).
    if (ours.has(n) || n === HISTORY_DIR || n === ".creates") continue;
    // A delete's version beside the head it removed (`.<key>.del`) is the library's too.
    if (
      n.startsWith(".") &&
      (n.endsWith(".tmp") || n.endsWith(".del") || /\.lock(\.b[0-9a-f]+)?$/.test(n))
    ) leftovers++;
    else strangers.push(n);
  }
  const found = new Map<string, Found>();
  for (const key of keys) found.set(key, await readKey(store, key, names.has(`${key}.md`)));
  const disagreements: string[] = [];
  const healthy = new Map<string, string>();
  for (const [key, f] of found) {
    if ("value" in f && f.value !== null) healthy.set(key, entryFor(key, f.value).description);
  }
  const listed = new Map((await store.list()).map((i) => [i.key, i.description]));
  for (const [key, description] of healthy) {
    if (listed.get(key) !== description) {
      disagreements.push(
        `list() ${listed.has(key) ? "shows another description of" : "misses"} ${key}`,
      );
    }
  }
  for (const key of listed.keys()) {
    if (!healthy.has(key)) {
      disagreements.push(`list() shows ${key}, which read() cannot read whole`);
    }
  }
  const audit = await auditStore(store);
  const torn = new Set([...found].filter(([, f]) => "torn" in f).map(([k]) => k));
  for (const e of audit.entries) {
    if (e.problem === undefined && !healthy.has(e.name)) {
      disagreements.push(`the audit calls ${e.name} healthy`);
    }
    if (e.problem !== undefined && !torn.has(e.name)) {
      disagreements.push(`the audit calls ${e.name} ${e.problem}`);
    }
  }
  const audited = new Set(audit.entries.map((e) => e.name));
  for (const key of [...healthy.keys(), ...torn]) {
    if (!audited.has(key)) disagreements.push(`the audit misses ${key}`);
  }
  const historyProblems = (audit.history ?? []).map((p) => ({
    key: p.key,
    text: `${p.revision === undefined ? "" : `revision ${p.revision}: `}${p.problem}: ${p.reason}`,
  }));
  if (withCli) {
    disagreements.push(...await cliCheck(dir, healthy.size, torn, historyProblems.length));
  }
  return { keys: found, strangers, leftovers, disagreements, historyProblems };
}

async function readKey(store: Store, key: string, named: boolean): Promise<Found> {
  try {
    const entry = await store.read(key);
    const version = versionOf(key, entry.description);
    if (version === undefined) return { torn: `holds a description no write made` };
    const expected = entryFor(key, version);
    if (entry.content !== expected.content) {
      return { torn: `version ${version} with other content (${entry.content.length} chars)` };
    }
    return { value: version };
  } catch (e) {
    if (e instanceof NotFoundError) {
      return named ? { torn: "its file is unreadable" } : { value: null };
    }
    if (e instanceof CorruptError) return { torn: e.message.replace(/^\[memory:file\] /, "") };
    throw e;
  }
}

// `agentmem check --json` as an operator runs it: its counts must match what read() found.
async function cliCheck(
  dir: string,
  healthy: number,
  torn: Set<string>,
  historyProblems: number,
): Promise<string[]> {
  // As an operator runs it: the package's own configuration.
  const out = await spawnDeno(CLI, ["check", "--json", "--dir", dir], {
    name: "agentmem check",
    config: ROOT_CONFIG,
  }).finished();
  const text = out.stdout;
  let report: { healthy?: number; problems?: { name: string }[]; history?: unknown[] };
  try {
    report = JSON.parse(text);
  } catch {
    return [
      `agentmem check printed no JSON (exit ${out.code}): ${out.stderr}`,
    ];
  }
  const problems = new Set((report.problems ?? []).map((p) => p.name));
  const wrong: string[] = [];
  if (report.healthy !== healthy) {
    wrong.push(`agentmem check counts ${report.healthy} healthy, read() ${healthy}`);
  }
  if ([...torn].some((k) => !problems.has(k)) || problems.size !== torn.size) {
    wrong.push(`agentmem check names problems [${[...problems]}], read() [${[...torn]}]`);
  }
  if ((report.history ?? []).length !== historyProblems) {
    wrong.push(
      `agentmem check names ${
        (report.history ?? []).length
      } history problems, the audit ${historyProblems}`,
    );
  }
  const bad = torn.size > 0 || historyProblems > 0;
  if (out.code !== (bad ? 1 : 0)) wrong.push(`agentmem check exited ${out.code}`);
  return wrong;
}
