// What every page of one console run shares: the store, how the page chrome reads, the door's
// secrets (for the CSRF field), the kept history index and the last audit, and the error page.

import type { Context as HonoContext } from "hono";
import { type Anchor, MemoryError, Scope, type Store } from "../../mod.ts";
import type { AuditCache } from "./_audit_cache.ts";
import { type Door, sameOriginForm } from "./_guard.ts";
import { type Chrome, type Html, html, notice, page } from "./_html.ts";
import type { LogIndex } from "./_log_index.ts";

/** One console run. */
export interface Console {
  readonly store: Store;
  readonly chrome: Chrome;
  readonly door: Door;
  readonly index: LogIndex;
  readonly audits: AuditCache;
  /** Reads the anchor (`--anchor`) when the check page asks; `undefined` without. */
  readonly anchor: (() => Promise<Anchor>) | undefined;
  /** How the operator started this console, for the read-only page (store options, no secret). */
  readonly restartHint: string;
  /** One line on stderr (never a token, a path or a credential). */
  readonly log: (line: string) => void;
}

/** The scope the console's own writes are recorded under: a run of their own, actor "operator". */
export function operatorScope(): Scope {
  return new Scope({ actor: "operator" });
}

/** A page answer. */
export function render(c: HonoContext, con: Console, title: string, main: Html, status = 200) {
  return c.html(page(con.chrome, title, main), status as 200);
}

/** The hidden CSRF field every form carries. */
export function csrfField(con: Console): Html {
  return html`<input type="hidden" name="csrf" value="${con.door.csrf}">`;
}

const STATUS: Readonly<Record<string, number>> = {
  not_found: 404,
  invalid_key: 400,
  stale: 409,
  exists: 409,
  capacity: 409,
  config: 400,
  read_only: 403,
};

/**
 * The page for a failed store call: a `MemoryError`'s message (the library keeps host paths and
 * credentials out of them) or, for anything else, only its kind.
 */
export function failurePage(c: HonoContext, con: Console, e: unknown) {
  if (e instanceof MemoryError) {
    return render(
      c,
      con,
      "That did not work",
      notice("error", html`${e.message}`),
      STATUS[e.code] ?? 500,
    );
  }
  const kind = e instanceof Error ? e.name : typeof e;
  con.log(`unexpected failure serving ${c.req.method} ${new URL(c.req.url).pathname}: ${kind}`);
  return render(
    c,
    con,
    "Unexpected failure",
    notice(
      "error",
      html`The console failed (${kind}); nothing more is shown, since its text can hold host paths.`,
    ),
    500,
  );
}

/** The refusal of a state change in read-only mode: a 403 page saying how to allow it. */
export function readOnlyPage(c: HonoContext, con: Console) {
  return render(
    c,
    con,
    "Read-only console",
    html`${
      notice(
        "warn",
        html`This console was started read-only, so it changes nothing. To restore, revert, approve, reject, redact or purge, stop it and start it again with <code>--write</code>:`,
      )
    }<pre class="command">${con.restartHint}</pre>`,
    403,
  );
}

/**
 * A state change's form: the refusal (a 403 page) in read-only mode or for a form that is not this
 * console's own (another origin, no CSRF token), else the form's fields.
 */
export async function changeForm(
  c: HonoContext,
  con: Console,
): Promise<Record<string, unknown> | Response> {
  if (!con.chrome.writable) return readOnlyPage(c, con);
  const form = await c.req.parseBody();
  if (!sameOriginForm(c, con.door, form)) {
    return c.text("agentmem console: not this console's form", 403);
  }
  return form;
}
