// `serve`: opens the store (read-only unless --write) and hands it to the console (cli/serve/),
// loaded only for this command, so the other commands never load the web framework.

import { loadAnchorFile } from "./_anchor.ts";
import { UsageError } from "./_args.ts";
import type { OpenedStore } from "./_open.ts";
import { err, out } from "./_output.ts";
import type { Command, Context } from "./_spec.ts";
import { listenOptions } from "./serve/listen.ts";

export const serveCommand: Command = {
  name: "serve",
  summary:
    "the operator console: a local web page over the store (memories, timelines and diffs, the audit log, runs and their reverts, the check)",
  about:
    "Prints one line, the URL with a random access token; serves until SIGINT or SIGTERM. Read-only unless --write; bound to loopback unless --host says otherwise (which warns).",
  options: {
    port: { kind: "string", value: "<n>", help: "the TCP port (default 0: a free one)" },
    host: {
      kind: "string",
      value: "<address>",
      help: "the address to bind (default 127.0.0.1; any other warns)",
    },
    write: {
      kind: "boolean",
      help: "allow restore, revert, approve, reject, redact and purge (each confirmed)",
    },
    anchor: {
      kind: "string",
      value: "<file>",
      help: "the check page also checks the store against this anchor (check --save-anchor)",
    },
    "anchor-sha256": {
      kind: "string",
      value: "<hex>",
      help: "with --anchor: refuse an anchor file whose SHA-256 is not this one",
    },
  },
  reach: "store",
  examples: ["agentmem serve --dir ./.agentmem"],
  alias: ["console", "ui", "web"],
  run: serve,
};

async function serve(ctx: Context): Promise<number> {
  const write = ctx.flag("write");
  if (write && ctx.flag("read-only")) {
    throw new UsageError("choose --read-only or --write, not both");
  }
  let listen: { port: number; host: string };
  try {
    listen = listenOptions(ctx.str("port"), ctx.str("host"));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  // Read at start (a mistake shows at once) and again at each visit of the check page.
  const file = ctx.str("anchor");
  const sha = ctx.str("anchor-sha256");
  if (sha !== undefined && file === undefined) {
    throw new UsageError("--anchor-sha256 needs --anchor");
  }
  const anchor = file === undefined ? undefined : () => loadAnchorFile(file, sha);
  await anchor?.();
  const opened = await ctx.open({ readOnly: !write });
  const { serveConsole } = await import("./serve/mod.ts");
  return await serveConsole(opened.store, {
    ...listen,
    write,
    where: where(opened),
    restartHint: restartHint(ctx),
    anchor,
    out,
    err,
  });
}

// The store in words, for the page header: never the directory's path or a server URL.
function where(opened: OpenedStore): string {
  const backend = opened.store.info().backend;
  if (opened.bucket === undefined) return `${backend} store`;
  return `${backend} bucket ${opened.bucket}${opened.prefix ? `, prefix ${opened.prefix}` : ""}`;
}

// How to start this console again with --write, naming the options given but none of their values
// that could be a path or a credential.
function restartHint(ctx: Context): string {
  const parts = ["agentmem serve"];
  const [bucket, prefix] = [ctx.str("bucket"), ctx.str("prefix")];
  if (ctx.str("config") !== undefined) parts.push("--config <the same file>");
  else if (ctx.str("servers") !== undefined) {
    parts.push("--servers <the same servers>");
    if (ctx.str("creds") !== undefined) parts.push("--creds <the same file>");
    if (bucket !== undefined) parts.push(`--bucket ${bucket}`);
    if (prefix !== undefined) parts.push(`--prefix ${prefix === "" ? '""' : prefix}`);
  } else if (ctx.str("dir") !== undefined) parts.push("--dir <the same directory>");
  if (ctx.str("port") !== undefined) parts.push(`--port ${ctx.str("port")}`);
  if (ctx.str("host") !== undefined) parts.push(`--host ${ctx.str("host")}`);
  if (ctx.str("anchor") !== undefined) parts.push("--anchor <the same file>");
  if (ctx.str("anchor-sha256") !== undefined) {
    parts.push(`--anchor-sha256 ${ctx.str("anchor-sha256")}`);
  }
  parts.push("--write");
  return parts.join(" ");
}
