// Debian's Chromium (/usr/bin/chromium), headless, driven by playwright-core over its DevTools
// protocol: a fresh profile per browser, no network of its own (no background fetches, updates,
// sync or QUIC), and every page's screenshot written under tests/console/screenshots/. Whatever
// the page logs about a Content-Security-Policy violation, a script error or a dialog is kept,
// so a test can assert there was none.

import { type BrowserContext, chromium, type Page } from "playwright-core";
import { type TempDir, tempDir } from "../_lib/temp_dir.ts";

/** Where the screenshots go (gitignored: each run writes them anew). */
export const SCREENSHOTS = new URL("./screenshots/", import.meta.url).pathname;

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A browser with one page, and what went wrong in it. */
export interface Browser extends AsyncDisposable {
  readonly page: Page;
  /** CSP violations, script errors and dialogs seen so far. */
  readonly troubles: string[];
  /** Writes the page's screenshot as `<name>.png`. */
  shot(name: string): Promise<string>;
}

/** Starts Chromium with a fresh profile; `javaScript: false` turns scripts off in its pages. */
export async function browser(o: { javaScript?: boolean } = {}): Promise<Browser> {
  const profile: TempDir = await tempDir("agentmem-chromium-");
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile.path, {
      executablePath: "/usr/bin/chromium",
      headless: true,
      args: FLAGS,
      viewport: { width: 1280, height: 800 },
      javaScriptEnabled: o.javaScript ?? true,
      timeout: 60_000,
    });
  } catch (e) {
    await profile[Symbol.asyncDispose]();
    throw e;
  }
  const page = context.pages()[0] ?? await context.newPage();
  page.setDefaultTimeout(30_000);
  const troubles: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) troubles.push(`csp: ${m.text()}`);
  });
  page.on("pageerror", (e) => troubles.push(`script error: ${e.message}`));
  page.on("dialog", (d) => {
    troubles.push(`dialog: ${d.message()}`);
    d.dismiss().catch(() => {});
  });
  await Deno.mkdir(SCREENSHOTS, { recursive: true });
  return {
    page,
    troubles,
    shot: async (name) => {
      const path = `${SCREENSHOTS}${name}.png`;
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    [Symbol.asyncDispose]: async () => {
      await context.close().catch(() => {});
      await profile[Symbol.asyncDispose]();
    },
  };
}
