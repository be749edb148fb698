// Paging through memory_list as a model does: each page one call, continuing where the page says,
// collecting the stable keys (`s000`, `s001`, ...) the pages show. Shared by the listing tests.

import assert from "node:assert/strict";
import { memoryTools, MIN_LIST_CHARS, runTool, type Store } from "../../mod.ts";

/** One pass over every page; `beforePage` runs before each page's call. */
export async function pageAll(
  store: Store,
  o: { readonly beforePage?: () => void } = {},
): Promise<{ seen: Set<string>; pages: number }> {
  const tools = memoryTools(store, { listMaxChars: MIN_LIST_CHARS });
  const seen = new Set<string>();
  let args: Record<string, unknown> = {};
  let pages = 0;
  for (;;) {
    o.beforePage?.();
    const { content, isError } = await runTool(tools, "memory_list", args);
    assert.ok(!isError, content);
    pages++;
    for (const m of content.matchAll(/^- "?(s\d{3})"?: /gm)) seen.add(m[1]!);
    const next = /call memory_list with (\{.*?\})\. /.exec(content);
    if (next === null) return { seen, pages };
    args = JSON.parse(next[1]!);
  }
}
