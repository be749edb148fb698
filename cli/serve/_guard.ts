// The console's door, in front of every route: the Host header must name the address it is bound
// to (a DNS-rebinding page names its own), every request must carry the access token (`?token=`
// once, then an HttpOnly SameSite=Strict cookie), every state change is a same-origin POST with
// the CSRF token, and every answer carries a strict Content-Security-Policy. A refusal never shows
// store text and never redirects; the token is never written into a page or a log line.

import { timingSafeEqual } from "node:crypto";
import { Buffer } from "node:buffer";
import type { Context, MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { isLoopback } from "./listen.ts";

/** No script at all, styles only from the console itself, no frame, no form to elsewhere. */
export const CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

const HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy": CSP,
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  // Not no-referrer: under it a browser sends "Origin: null" on the console's own forms.
  "Referrer-Policy": "same-origin",
  "Cache-Control": "no-store",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
};

/** The secrets and the address one console run checks requests against. */
export interface Door {
  /** The access token (printed once, on the URL line). */
  readonly token: string;
  /** The CSRF token every form carries (not the access token, which no page shows). */
  readonly csrf: string;
  /** The `Host` header values that name this console (`127.0.0.1:PORT`, `localhost:PORT`). */
  readonly hosts: ReadonlySet<string>;
  /** The origins a browser sends on this console's own forms. */
  readonly origins: ReadonlySet<string>;
  /** The cookie's name (per port: browsers share cookies across the ports of a host). */
  readonly cookie: string;
}

/** 32 random bytes, base64url. */
export function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Buffer.from(bytes).toString("base64url");
}

/** The door for a console bound to `host` (as given) and `port`. */
export function door(host: string, port: number, secrets: { token: string; csrf: string }): Door {
  const name = host.includes(":") ? `[${host}]` : host;
  const names = [name];
  if (isLoopback(host)) names.push("localhost", "127.0.0.1", "[::1]");
  const hosts = new Set(names.map((n) => `${n.toLowerCase()}:${port}`));
  return {
    ...secrets,
    hosts,
    origins: new Set([...hosts].map((h) => `http://${h}`)),
    cookie: `agentmem_console_${port}`,
  };
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function refusal(c: Context, status: 401 | 403 | 421, message: string): Response {
  for (const [k, v] of Object.entries(HEADERS)) c.header(k, v);
  return c.text(message, status);
}

/**
 * The middleware: Host, token (a valid `?token=` sets the cookie and sends the browser on to the
 * same page without it, so the token leaves the address bar and the history), then the page,
 * then the security headers.
 */
export function guard(d: Door): MiddlewareHandler {
  return async (c, next) => {
    const host = (c.req.header("host") ?? "").toLowerCase();
    if (!d.hosts.has(host)) {
      return refusal(
        c,
        421,
        "agentmem console: this request names another host; open the URL agentmem serve printed",
      );
    }
    const url = new URL(c.req.url);
    const given = url.searchParams.get("token");
    const cookie = getCookie(c, d.cookie);
    if (given !== null && same(given, d.token)) {
      setCookie(c, d.cookie, d.token, { httpOnly: true, sameSite: "Strict", path: "/" });
      url.searchParams.delete("token");
      if (c.req.method === "GET") {
        for (const [k, v] of Object.entries(HEADERS)) c.header(k, v);
        c.header("Location", `${url.pathname}${url.search}`);
        return c.body(null, 303);
      }
    } else if (cookie === undefined || !same(cookie, d.token)) {
      return refusal(
        c,
        401,
        "agentmem console: the access token is missing or wrong; open the URL agentmem serve printed",
      );
    }
    await next();
    for (const [k, v] of Object.entries(HEADERS)) c.res.headers.set(k, v);
    return undefined;
  };
}

/**
 * Whether a POST is this console's own form: same origin (when the browser says), and the form's
 * CSRF token.
 */
export function sameOriginForm(c: Context, d: Door, form: Record<string, unknown>): boolean {
  const origin = c.req.header("origin");
  if (origin !== undefined && !d.origins.has(origin.toLowerCase())) return false;
  const site = c.req.header("sec-fetch-site");
  if (site !== undefined && site !== "same-origin") return false;
  const csrf = form.csrf;
  return typeof csrf === "string" && same(csrf, d.csrf);
}
