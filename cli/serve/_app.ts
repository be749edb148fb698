// The console's routes, behind the door (_guard.ts). Reading is GET; every state change is a POST
// of a form shown on a confirmation page; any other method is refused.

import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { checkPage } from "./_check.ts";
import { type Console, failurePage, render } from "./_context.ts";
import { purgeConfirmPage, purgePost, redactConfirmPage, redactPost } from "./_erase.ts";
import { guard } from "./_guard.ts";
import { html, notice } from "./_html.ts";
import { logPage, runPage, runsPage } from "./_log.ts";
import { memoriesPage, overviewPage } from "./_memories.ts";
import { diffPage, memoryPage, restoreConfirmPage, restorePost, versionPage } from "./_memory.ts";
import { revertPost, revertPreviewPage } from "./_revert.ts";
import { approvePost, proposalPage, rejectPost, reviewPage } from "./_review.ts";
import { STYLE } from "./_style.ts";

/** The console's Hono app for one console run. */
export function consoleApp(con: Console): Hono {
  const app = new Hono();
  app.use("*", guard(con.door));
  app.use("*", async (c, next) => {
    if (c.req.method !== "GET" && c.req.method !== "HEAD" && c.req.method !== "POST") {
      return c.text("agentmem console: only GET and POST", 405, { Allow: "GET, POST" });
    }
    await next();
    return undefined;
  });
  app.use("*", bodyLimit({ maxSize: 64 * 1024 }));
  app.get("/console.css", (c) => c.body(STYLE, 200, { "Content-Type": "text/css; charset=utf-8" }));
  app.get("/favicon.ico", (c) => c.body(null, 204));
  app.get("/", (c) => overviewPage(c, con));
  app.get("/memories", (c) => memoriesPage(c, con));
  app.get("/memory/:key", (c) => memoryPage(c, con));
  app.get("/memory/:key/version/:rev", (c) => versionPage(c, con));
  app.get("/memory/:key/diff", (c) => diffPage(c, con));
  app.get("/memory/:key/restore", (c) => restoreConfirmPage(c, con));
  app.post("/memory/:key/restore", (c) => restorePost(c, con));
  app.get("/memory/:key/redact", (c) => redactConfirmPage(c, con));
  app.post("/memory/:key/redact", (c) => redactPost(c, con));
  app.get("/memory/:key/purge", (c) => purgeConfirmPage(c, con));
  app.post("/memory/:key/purge", (c) => purgePost(c, con));
  app.get("/log", (c) => logPage(c, con));
  app.get("/runs", (c) => runsPage(c, con));
  app.get("/run/:run", (c) => runPage(c, con));
  app.get("/run/:run/revert", (c) => revertPreviewPage(c, con));
  app.post("/run/:run/revert", (c) => revertPost(c, con));
  app.get("/review", (c) => reviewPage(c, con));
  app.get("/review/:id", (c) => proposalPage(c, con));
  app.post("/review/:id/approve", (c) => approvePost(c, con));
  app.post("/review/:id/reject", (c) => rejectPost(c, con));
  app.get("/check", (c) => checkPage(c, con));
  app.notFound((c) =>
    render(
      c,
      con,
      "Not found",
      notice("info", html`No page here. <a href="/">The overview</a> links to every page.`),
      404,
    )
  );
  app.onError((e, c) => failurePage(c, con, e));
  return app;
}
