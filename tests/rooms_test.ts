// The house's rules of rooms, checked on every TypeScript file of the checkout: a `_` name is
// private to the folder that holds it; a backend's folder is private to its opener but for its
// test face; no import circle; file headers of a few lines (the reasoning lives in docs/design/).

import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url).pathname;
const SKIP = new Set([".git", "npm", "node_modules"]);

/** Every .ts file, relative to the root. */
function sources(dir = ""): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(`${ROOT}${dir}`)) {
    const path = dir === "" ? e.name : `${dir}/${e.name}`;
    if (e.isDirectory && !SKIP.has(e.name) && !e.name.startsWith(".")) out.push(...sources(path));
    else if (e.isFile && e.name.endsWith(".ts")) out.push(path);
  }
  return out.sort();
}

function resolve(from: string, specifier: string): string {
  return new URL(specifier, `file:///${from}`).pathname.slice(1);
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["'](\.{1,2}\/[^"']+)["']/g;
const DYNAMIC = /import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;
const BARE = /(?:^|\n)\s*import\s+["'](\.{1,2}\/[^"']+)["']/g;
// A file a test or a tool starts as a process of its own (`new URL("./worker.ts", ...)`).
const SPAWNED = /new URL\(\s*["'](\.{1,2}\/[^"']+\.ts)["']/g;

interface Edge {
  readonly from: string;
  readonly to: string;
  readonly spawned: boolean;
}

function edges(): Edge[] {
  const out: Edge[] = [];
  for (const from of sources()) {
    const text = Deno.readTextFileSync(`${ROOT}${from}`);
    for (const re of [IMPORT, DYNAMIC, BARE, SPAWNED]) {
      for (const m of text.matchAll(re)) {
        out.push({ from, to: resolve(from, m[1]!), spawned: re === SPAWNED });
      }
    }
  }
  return out;
}

const within = (path: string, dir: string) => dir === "" || path.startsWith(`${dir}/`);

Deno.test("rooms: a _ file or folder is imported (or started) only from the folder that holds it", () => {
  const broken: string[] = [];
  for (const { from, to } of edges()) {
    const parts = to.split("/");
    const at = parts.findIndex((p) => p.startsWith("_"));
    if (at < 0) continue;
    const owner = parts.slice(0, at).join("/");
    if (!within(from, owner)) broken.push(`${from} -> ${to}`);
  }
  assert.deepEqual(broken, []);
});

Deno.test("rooms: a backend's folder is reached only through its opener, or its test face", () => {
  const broken: string[] = [];
  for (const { from, to } of edges()) {
    const m = /^backends\/([^/]+)\/(.+)$/.exec(to);
    if (m === null) continue;
    const [, name, file] = m as unknown as [string, string, string];
    if (from === `backends/${name}.ts` || within(from, `backends/${name}`)) continue;
    if (file !== "testing.ts") broken.push(`${from} -> ${to}`);
  }
  assert.deepEqual(broken, []);
});

Deno.test("rooms: no import circle, type imports included", () => {
  const graph = new Map<string, string[]>();
  for (const { from, to, spawned } of edges()) {
    if (spawned) continue; // a process it starts, not a module it loads
    graph.set(from, [...(graph.get(from) ?? []), to]);
  }
  const state = new Map<string, "open" | "done">();
  const circles: string[] = [];
  const visit = (node: string, path: string[]) => {
    state.set(node, "open");
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === "open") {
        circles.push([...path, node, next].slice(path.indexOf(next)).join(" -> "));
      } else if (!state.has(next)) visit(next, [...path, node]);
    }
    state.set(node, "done");
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node, []);
  assert.deepEqual(circles, []);
});

/** Headers still longer than the rule, each at most as long as it is; they shrink as rewritten. */
const LONG_HEADERS: Record<string, number> = {
  // Claude's memory tool and the search's sidecar (issue 32).
  "tools/claude_memory/_files.ts": 17,
  "backends/file/sidecar.ts": 14,
};
const MAX_HEADER_LINES = 12;

// The lines of a file's leading comment, its code examples left out.
function headerLines(text: string): number {
  const lines = text.split("\n");
  let n = 0;
  let fenced = false;
  if (lines[0]?.startsWith("/**")) {
    for (const line of lines) {
      if (/^\s*\*\s*```/.test(line)) fenced = !fenced;
      else if (!fenced) n++;
      if (line.trim().endsWith("*/")) break;
    }
  } else {
    for (const line of lines) {
      if (!line.startsWith("//")) break;
      n++;
    }
  }
  return n;
}

Deno.test("rooms: a file's header says in a few lines what it guarantees", () => {
  const long: string[] = [];
  for (const file of sources()) {
    const n = headerLines(Deno.readTextFileSync(`${ROOT}${file}`));
    const most = LONG_HEADERS[file] ?? MAX_HEADER_LINES;
    if (n > most) long.push(`${file}: ${n} lines (at most ${most})`);
  }
  assert.deepEqual(long, []);
});
