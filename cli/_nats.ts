// The CLI's NATS connection: server URLs and credentials from the command line and the
// environment. Credentials are registered as secrets, never printed, never part of an error.

import type { NatsConnection } from "@nats-io/nats-core";
import { UnavailableError } from "../mod.ts";
import { UsageError } from "./_args.ts";
import { readFileBytes, unreadable } from "./_input.ts";
import { addSecret } from "./_output.ts";

/** How to log in. */
export type NatsAuth =
  | { readonly kind: "none" }
  | { readonly kind: "creds"; readonly path: string }
  | { readonly kind: "user"; readonly user: string; readonly pass: string }
  | { readonly kind: "token"; readonly token: string };

/** Where to connect and how to log in. */
export interface NatsTarget {
  /** Server URLs without userinfo. */
  readonly servers: readonly string[];
  readonly auth: NatsAuth;
}

/**
 * The servers and credentials: `--creds`, else a URL's `user:password@` (or `token@`), else
 * `NATS_USER`/`NATS_PASSWORD` or `NATS_TOKEN` from `env`.
 *
 * @throws {UsageError} on a malformed URL or credentials given more than one way.
 */
export function natsTarget(
  serversOption: string | undefined,
  creds: string | undefined,
  env: (name: string) => string | undefined,
): NatsTarget {
  const servers: string[] = [];
  let fromUrl: NatsAuth | undefined;
  const entries = (serversOption ?? "nats://127.0.0.1:4222").split(",");
  for (const [i, raw] of entries.entries()) {
    const entry = raw.trim();
    if (entry === "") throw new UsageError(`--servers has an empty entry (number ${i + 1})`);
    let url: URL;
    try {
      url = new URL(entry.includes("://") ? entry : `nats://${entry}`);
    } catch {
      // The entry may hold a password: it is never repeated.
      throw new UsageError(`--servers entry ${i + 1} is not a valid URL`);
    }
    if (url.host === "") throw new UsageError(`--servers entry ${i + 1} has no host`);
    let auth: NatsAuth | undefined;
    try {
      const user = decodeURIComponent(url.username);
      const pass = decodeURIComponent(url.password);
      if (user !== "" && url.password !== "") auth = { kind: "user", user, pass };
      else if (user !== "") auth = { kind: "token", token: user };
    } catch {
      throw new UsageError(`--servers entry ${i + 1} has malformed credentials`);
    }
    if (auth !== undefined) {
      if (auth.kind === "user") addSecret(auth.pass);
      else if (auth.kind === "token") addSecret(auth.token);
      if (fromUrl !== undefined && JSON.stringify(fromUrl) !== JSON.stringify(auth)) {
        throw new UsageError("--servers gives different credentials in different URLs");
      }
      fromUrl = auth;
    }
    servers.push(`${url.protocol}//${url.host}`);
  }
  if (creds !== undefined) {
    if (fromUrl !== undefined) {
      throw new UsageError("give NATS credentials one way: --creds or user:password@ in --servers");
    }
    return { servers, auth: { kind: "creds", path: creds } };
  }
  if (fromUrl !== undefined) return { servers, auth: fromUrl };
  const user = env("NATS_USER");
  const pass = env("NATS_PASSWORD");
  const token = env("NATS_TOKEN");
  if (pass !== undefined) addSecret(pass);
  if (token !== undefined) addSecret(token);
  if (user !== undefined && token !== undefined) {
    throw new UsageError("set NATS_USER and NATS_PASSWORD, or NATS_TOKEN, not both");
  }
  if (user !== undefined) {
    if (pass === undefined) throw new UsageError("NATS_USER is set but NATS_PASSWORD is not");
    return { servers, auth: { kind: "user", user, pass } };
  }
  if (pass !== undefined) throw new UsageError("NATS_PASSWORD is set but NATS_USER is not");
  if (token !== undefined) return { servers, auth: { kind: "token", token } };
  return { servers, auth: { kind: "none" } };
}

/**
 * Connects to the target's servers with its credentials.
 *
 * @throws {UnavailableError} when no server answers or the server refuses the credentials; the
 * message names neither the servers' credentials nor the creds file's content.
 */
export async function connectNats(target: NatsTarget): Promise<NatsConnection> {
  const { connect, credsAuthenticator } = await import("@nats-io/transport-node");
  const { auth } = target;
  let login = {};
  if (auth.kind === "creds") {
    let bytes: Uint8Array;
    try {
      bytes = await readFileBytes(auth.path);
    } catch (e) {
      throw new UnavailableError(
        `Cannot read the credentials file given by --creds: ${unreadable(e)}`,
      );
    }
    login = { authenticator: credsAuthenticator(bytes) };
  } else if (auth.kind === "user") login = { user: auth.user, pass: auth.pass };
  else if (auth.kind === "token") login = { token: auth.token };
  try {
    return await connect({
      servers: [...target.servers],
      name: "agentmem-cli",
      ...login,
      timeout: 5_000,
      maxReconnectAttempts: 2,
    });
  } catch (e) {
    const name = e instanceof Error ? e.name : "";
    if (name === "AuthorizationError" || /authorization/i.test(String(e))) {
      throw new UnavailableError(
        `Cannot connect to the NATS servers given by --servers: the server refused the credentials${
          auth.kind === "none"
            ? " (none were given: use --creds, user:password@ in the URL, NATS_USER and NATS_PASSWORD, or NATS_TOKEN)"
            : ""
        }`,
      );
    }
    const code = e instanceof Error && "code" in e ? String(e.code) : name;
    throw new UnavailableError(
      `Cannot connect to the NATS servers given by --servers${code ? ` (${code})` : ""}`,
    );
  }
}
