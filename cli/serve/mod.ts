/**
 * `agentmem serve`: the operator console, a local web page over one store (its memories, their
 * timelines and diffs, the audit log, the runs and their reverts, the check), served by Hono on
 * node:http (Deno and Node alike) until SIGINT or SIGTERM. Read-only unless `write`.
 *
 * @module
 */

import { createAdaptorServer } from "@hono/node-server";
import process from "node:process";
import type { AddressInfo } from "node:net";
import type { Anchor, Store } from "../../mod.ts";
import { consoleApp } from "./_app.ts";
import { AuditCache } from "./_audit_cache.ts";
import type { Console } from "./_context.ts";
import { door, randomToken } from "./_guard.ts";
import { hostWarning } from "./listen.ts";
export { DEFAULT_HOST, listenOptions } from "./listen.ts";
import { LogIndex } from "./_log_index.ts";

/** How `serveConsole` listens and what it says. */
export interface ServeOptions {
  /** The TCP port; 0 picks a free one. */
  readonly port: number;
  /** The address to bind (default loopback); any other prints a warning. */
  readonly host: string;
  /** Allow state changes (restore, revert, approve, reject, redact, purge). */
  readonly write: boolean;
  /** The store in words for the page header (backend, bucket, prefix; never a path). */
  readonly where: string;
  /** The command that starts this console with `--write` (no path, no credential in it). */
  readonly restartHint: string;
  /** Writes one line on stdout (the URL line). */
  readonly out: (line: string) => void;
  /** Writes one line on stderr (warnings, the console's own writes). */
  readonly err: (line: string) => void;
  /** Reads the anchor the check page checks against (`--anchor`); its errors' messages name no path. */
  readonly anchor?: (() => Promise<Anchor>) | undefined;
  /** Stops the console, as SIGINT does (for tests and embedding). */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Serves the console for `store` until SIGINT, SIGTERM or `options.signal`, then closes every
 * connection and resolves 0. Prints one line on stdout: the URL with the access token.
 *
 * @throws {Error} when the address cannot be bound (in use, not this machine's).
 */
export async function serveConsole(store: Store, options: ServeOptions): Promise<number> {
  const secrets = { token: randomToken(), csrf: randomToken() };
  // The door names the bound port, known once listening: until then every request waits.
  let fetch: (req: Request) => Response | Promise<Response> = () =>
    new Response("agentmem console: starting", { status: 503 });
  const server = createAdaptorServer({ fetch: (req: Request) => fetch(req) });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const con: Console = {
    store,
    chrome: { writable: options.write, where: options.where || store.info().backend },
    door: door(options.host, port, secrets),
    index: new LogIndex(store),
    audits: new AuditCache(store),
    anchor: options.anchor,
    restartHint: options.restartHint,
    log: options.err,
  };
  fetch = consoleApp(con).fetch;
  const warning = hostWarning(options.host, options.write);
  if (warning !== undefined) options.err(warning);
  // The signals are caught before the URL line is out: whoever reads it may stop us at once.
  // The first audit and the history's index, while the operator opens the page (a full store's
  // take seconds; a page asked for meanwhile waits for them).
  con.audits.get().then(() => con.index.versions()).catch(() => {});
  let stop = () => {};
  const stopped = new Promise<void>((resolve) => stop = resolve);
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const name = options.host.includes(":") ? `[${options.host}]` : options.host;
  options.out(
    `agentmem console (${
      options.write ? "write" : "read-only"
    }) at http://${name}:${port}/?token=${secrets.token}`,
  );
  options.signal?.addEventListener("abort", stop, { once: true });
  if (options.signal?.aborted) stop();
  try {
    await stopped;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    options.signal?.removeEventListener("abort", stop);
  }
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    (server as { closeAllConnections?: () => void }).closeAllConnections?.();
  });
  await con.index.settle();
  await con.audits.settle();
  options.err("console stopped");
  return 0;
}
