// `serve`: opens the store (read-only unless --write) and hands it to the console (cli/serve/),
// loaded only for this command, so the other commands never load the web framework.

import { readFile } from "node:fs/promises";
import { UsageError } from "./_args.ts";
import { existing, open, type OpenedStore, type OpenOptions } from "./_open.ts";
import { err, out } from "./_output.ts";
import { listenOptions } from "./serve/listen.ts";

/** `serve`'s own options. */
export interface ServeCommandOptions {
  readonly port?: string | undefined;
  readonly host?: string | undefined;
  readonly write: boolean;
  /** An anchor file (`agentmem check --save-anchor`) the check page checks against. */
  readonly anchor?: string | undefined;
}

/** `serve`: runs the console until SIGINT or SIGTERM. */
export async function serveCommand(o: OpenOptions, s: ServeCommandOptions): Promise<number> {
  if (s.write && o.readOnly) throw new UsageError("choose --read-only or --write, not both");
  let listen: { port: number; host: string };
  try {
    listen = listenOptions(s.port, s.host);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const anchorFile = s.anchor;
  const anchor = anchorFile === undefined ? undefined : async () => {
    try {
      return await readFile(anchorFile, "utf8");
    } catch {
      // The message never repeats the path.
      throw new UsageError("the file given by --anchor cannot be read");
    }
  };
  await anchor?.();
  const opened = existing(await open({ ...o, readOnly: !s.write, mayCreate: false }));
  try {
    const { serveConsole } = await import("./serve/mod.ts");
    return await serveConsole(opened.store, {
      ...listen,
      write: s.write,
      where: where(opened),
      restartHint: restartHint(o, s),
      anchor,
      out,
      err,
    });
  } finally {
    await opened.close();
  }
}

// The store in words, for the page header: never the directory's path or a server URL.
function where(opened: OpenedStore): string {
  const backend = opened.store.info().backend;
  if (opened.bucket === undefined) return `${backend} store`;
  return `${backend} bucket ${opened.bucket}${opened.prefix ? `, prefix ${opened.prefix}` : ""}`;
}

// How to start this console again with --write, naming the options given but none of their values
// that could be a path or a credential.
function restartHint(o: OpenOptions, s: ServeCommandOptions): string {
  const parts = ["agentmem serve"];
  if (o.config !== undefined) parts.push("--config <the same file>");
  else if (o.servers !== undefined) {
    parts.push("--servers <the same servers>");
    if (o.creds !== undefined) parts.push("--creds <the same file>");
    if (o.bucket !== undefined) parts.push(`--bucket ${o.bucket}`);
    if (o.prefix !== undefined) parts.push(`--prefix ${o.prefix === "" ? '""' : o.prefix}`);
  } else parts.push(o.dir === undefined ? "" : "--dir <the same directory>");
  if (s.port !== undefined) parts.push(`--port ${s.port}`);
  if (s.host !== undefined) parts.push(`--host ${s.host}`);
  if (s.anchor !== undefined) parts.push("--anchor <the same file>");
  parts.push("--write");
  return parts.filter((p) => p !== "").join(" ");
}
