// The console's security rules, each against a real `agentmem serve` process over HTTP: the
// token, the Host check, the CSP, CSRF-checked POSTs, read-only refusals, escaped stored text,
// and no path or token in any page or log line.

import assert from "node:assert/strict";
import { history, openFileStore } from "../../mod.ts";
import { tempDir } from "../_lib/temp_dir.ts";
import { DAY, HOSTILE, poisonedDay, rawRequest, serve, type Served } from "../_lib/console.ts";

// Every page a crawl from the index reaches, with its HTML (links followed, forms' GET targets
// not: the crawl only reads).
async function crawl(s: Served, limit = 200): Promise<Map<string, string>> {
  const seen = new Map<string, string>();
  const queue = ["/"];
  while (queue.length > 0 && seen.size < limit) {
    const path = queue.shift()!;
    if (seen.has(path)) continue;
    const html = await s.page(path);
    seen.set(path, html);
    for (const [, href] of html.matchAll(/href="([^"]+)"/g)) {
      const link = href!.replace(/&amp;/g, "&");
      if (link.startsWith("/") && !link.startsWith("//") && link !== "/console.css") {
        if (!seen.has(link)) queue.push(link);
      }
    }
  }
  return seen;
}

const PAGES = [
  "/",
  "/memories",
  "/memory/user.prefs",
  "/log",
  "/runs",
  `/run/${DAY.poison}`,
  "/check",
];

Deno.test("serve prints one line, the URL with a 43-character token, and stops cleanly on SIGTERM and SIGINT", async () => {
  await using tmp = await tempDir("agentmem-console-");
  await poisonedDay(tmp.path);
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    await using s = await serve(["--dir", tmp.path, "--port", "0"]);
    assert.match(s.url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
    assert.ok(s.port > 0);
    await s.page("/memories");
    const { code, stderr, stdout } = await s.stop(signal);
    assert.equal(code, 0, stderr);
    assert.equal(stdout.trimEnd().split("\n").length, 1, stdout);
    assert.ok(!stderr.includes(s.token), "the token is on stderr");
    await assert.rejects(fetch(`${s.origin}/`));
  }
});

Deno.test("serve: without the token every page and action is a 401 with no store text and no redirect", async () => {
  await using tmp = await tempDir("agentmem-console-");
  await poisonedDay(tmp.path);
  await using s = await serve(["--dir", tmp.path, "--write"]);
  const host = `127.0.0.1:${s.port}`;
  const paths = [...PAGES, "/memory/user.prefs/diff?from=1&to=2", "/nowhere", "/console.css"];
  for (const cookie of [undefined, `agentmem_console_${s.port}=${"A".repeat(43)}`]) {
    for (const path of [...paths, `/memories?token=${"B".repeat(43)}`]) {
      const r = await rawRequest(s.port, {
        path,
        headers: { host, ...(cookie === undefined ? {} : { cookie }) },
      });
      assert.equal(r.status, 401, path);
      assert.equal(r.headers.get("location"), null, path);
      for (const word of ["user.prefs", "User preferences", "metric", DAY.poison, "broken"]) {
        assert.ok(!r.body.includes(word), `${path} shows ${word}`);
      }
    }
    for (const action of ["/memory/user.prefs/restore", `/run/${DAY.poison}/revert`]) {
      const r = await rawRequest(s.port, {
        method: "POST",
        path: action,
        headers: {
          host,
          "content-type": "application/x-www-form-urlencoded",
          ...(cookie === undefined ? {} : { cookie }),
        },
        body: "rev=1",
      });
      assert.equal(r.status, 401, action);
    }
  }
  assert.equal((await history(await openFileStore({ dir: tmp.path }), "user.prefs")).length, 2);
  // The printed URL's token sets the cookie (HttpOnly, SameSite=Strict) and leaves the address.
  const first = await rawRequest(s.port, { path: `/memories?token=${s.token}`, headers: { host } });
  assert.equal(first.status, 303);
  assert.equal(first.headers.get("location"), "/memories");
  const set = first.headers.get("set-cookie") ?? "";
  assert.match(set, new RegExp(`^agentmem_console_${s.port}=${s.token};`));
  assert.match(set, /HttpOnly/);
  assert.match(set, /SameSite=Strict/);
  const then = await rawRequest(s.port, {
    path: "/memories",
    headers: { host, cookie: set.split(";")[0]! },
  });
  assert.equal(then.status, 200);
  assert.ok(then.body.includes("user.prefs"));
});

Deno.test("serve: a Host header that does not name the bound address is refused (DNS rebinding)", async () => {
  await using tmp = await tempDir("agentmem-console-");
  await poisonedDay(tmp.path);
  await using s = await serve(["--dir", tmp.path]);
  const cookie = `agentmem_console_${s.port}=${s.token}`;
  for (
    const host of [`evil.example:${s.port}`, "evil.example", `127.0.0.1:${s.port + 1}`, `127.0.0.1`]
  ) {
    for (const path of ["/memories", `/memories?token=${s.token}`]) {
      const r = await rawRequest(s.port, { path, headers: { host, cookie } });
      assert.ok(r.status === 421 || r.status === 403, `${host} ${path}: ${r.status}`);
      assert.ok(!r.body.includes("user.prefs"));
      assert.equal(r.headers.get("set-cookie"), null);
    }
  }
  const none = await rawRequest(s.port, { path: "/memories", headers: { cookie } });
  assert.ok(none.status === 421 || none.status === 400, `no Host: ${none.status}`);
  for (const host of [`127.0.0.1:${s.port}`, `localhost:${s.port}`]) {
    const r = await rawRequest(s.port, { path: "/memories", headers: { host, cookie } });
    assert.equal(r.status, 200, host);
  }
});

Deno.test("serve: every answer has a strict CSP and no page holds a script, an inline style or a third-party origin", async () => {
  await using tmp = await tempDir("agentmem-console-");
  await poisonedDay(tmp.path);
  await using s = await serve(["--dir", tmp.path, "--write"]);
  const pages = await crawl(s);
  assert.ok(pages.size >= 15, `the crawl reached only ${[...pages.keys()].join(" ")}`);
  for (const path of ["/memory/user.prefs/restore?rev=1", `/run/${DAY.poison}/revert`]) {
    pages.set(path, await s.page(path));
  }
  for (const [path, html] of pages) {
    const r = await s.fetch(path);
    const csp = r.headers.get("content-security-policy") ?? "";
    await r.body?.cancel();
    assert.match(csp, /default-src 'none'/, path);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:|\*/, path);
    assert.match(csp, /script-src|default-src 'none'/);
    assert.equal(r.headers.get("x-content-type-options"), "nosniff");
    assert.equal(r.headers.get("referrer-policy"), "same-origin");
    assert.doesNotMatch(html, /<script|<iframe|<img|<[^>]*\s(style|on[a-z]+)=/i, path);
    for (const [, url] of html.matchAll(/(?:href|src|action)="([^"]*)"/g)) {
      assert.ok(url!.startsWith("/") && !url!.startsWith("//"), `${path} links ${url}`);
    }
  }
  for (const status of [401, 421]) {
    const r = await rawRequest(s.port, {
      path: "/",
      headers: { host: status === 421 ? "evil.example" : `127.0.0.1:${s.port}` },
    });
    assert.equal(r.status, status);
    assert.match(r.headers.get("content-security-policy") ?? "", /default-src 'none'/);
  }
});

Deno.test("serve: stored text is escaped everywhere and shown as data", async () => {
  await using tmp = await tempDir("agentmem-console-");
  await poisonedDay(tmp.path);
  await using s = await serve(["--dir", tmp.path, "--write"]);
  const pages = await crawl(s);
  pages.set("restore", await s.page("/memory/user.prefs/restore?rev=1"));
  pages.set("revert", await s.page(`/run/${DAY.poison}/revert`));
  pages.set("search", await s.page("/memories?q=evil"));
  const all = [...pages.values()].join("\n");
  for (
    const raw of ["<script", "<img", "<iframe", "</pre><script", 'href="javascript:', "\u202E"]
  ) {
    assert.ok(!all.includes(raw), `a page holds ${JSON.stringify(raw)} unescaped`);
  }
  // ...and the text is there, as data.
  assert.ok(all.includes("&lt;script&gt;alert(&#39;body&#39;)&lt;/script&gt;"));
  assert.ok(all.includes("&lt;iframe src=&quot;https://evil.example/&quot;&gt;&lt;/iframe&gt;"));
  assert.ok(all.includes("U+202E"), "the bidi override is shown as a mark");
  assert.ok(pages.get("search")!.includes("user.prefs"), "the search finds the hostile body");
});

Deno.test("serve: no page and no log line holds the directory's path or the token", async () => {
  await using tmp = await tempDir("agentmem-console-");
  await poisonedDay(tmp.path);
  const s = await serve(["--dir", tmp.path, "--write"]);
  const pages = await crawl(s);
  pages.set("readonly-hint", await s.page(`/run/${DAY.poison}/revert`));
  const revert = await s.submit(`/run/${DAY.poison}/revert`, `/run/${DAY.poison}/revert`);
  assert.equal(revert.status, 200);
  pages.set("revert", await revert.text());
  const restore = await s.submit("/memory/user.prefs/restore?rev=1", "/memory/user.prefs/restore");
  pages.set("restore", await restore.text());
  for (const [path, html] of pages) {
    assert.ok(!html.includes(tmp.path), `${path} shows the path`);
    assert.ok(!html.includes(s.token), `${path} shows the token`);
  }
  const { stderr, stdout } = await s.stop();
  assert.ok(stderr.includes(`reverted run ${DAY.poison}`), stderr);
  assert.ok(!stderr.includes(tmp.path) && !stderr.includes(s.token), stderr);
  assert.equal(stdout.split(s.token).length, 2, "the token is printed once");
});

Deno.test("serve: a state change needs a POST from the console's own form, with its CSRF token", async () => {
  await using tmp = await tempDir("agentmem-console-");
  const store = await poisonedDay(tmp.path);
  await using s = await serve(["--dir", tmp.path, "--write"]);
  const before = await history(store, "user.prefs");
  // GET of a confirmation page changes nothing.
  await s.page("/memory/user.prefs/restore?rev=1");
  await s.page(`/run/${DAY.poison}/revert`);
  const form = { "content-type": "application/x-www-form-urlencoded" };
  const head = before[0]!.revision;
  const attempts: [string, RequestInit][] = [
    ["no csrf", { headers: form, body: `rev=1&head=${head}` }],
    ["a wrong csrf", { headers: form, body: `rev=1&head=${head}&csrf=${"x".repeat(43)}` }],
    ["another origin", {
      headers: { ...form, origin: "http://evil.example" },
      body: `rev=1&head=${head}&csrf=`,
    }],
  ];
  for (const [what, init] of attempts) {
    const r = await s.fetch("/memory/user.prefs/restore", { method: "POST", ...init });
    assert.equal(r.status, 403, what);
    await r.body?.cancel();
  }
  // With a right token but another origin, still refused.
  const html = await s.page("/memory/user.prefs/restore?rev=1");
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
  const cross = await s.fetch("/memory/user.prefs/restore", {
    method: "POST",
    headers: { ...form, origin: "http://evil.example", "sec-fetch-site": "cross-site" },
    body: `rev=1&head=${head}&csrf=${csrf}`,
  });
  assert.equal(cross.status, 403);
  await cross.body?.cancel();
  for (const method of ["PUT", "DELETE", "PATCH"]) {
    const r = await s.fetch("/memory/user.prefs/restore", { method });
    assert.equal(r.status, 405, method);
    await r.body?.cancel();
  }
  assert.deepEqual(await history(store, "user.prefs"), before);
  // The form itself works.
  const ok = await s.submit("/memory/user.prefs/restore?rev=1", "/memory/user.prefs/restore");
  assert.equal(ok.status, 200, await ok.clone().text());
  assert.equal((await store.read("user.prefs")).content, "metric units\nshort answers\n");
});

Deno.test("serve: read-only (the default) refuses every state change with a 403 page naming --write", async () => {
  await using tmp = await tempDir("agentmem-console-");
  const store = await poisonedDay(tmp.path);
  await using s = await serve(["--dir", tmp.path]);
  const memories = await s.page("/memories");
  assert.match(memories, /read-only/);
  const preview = await s.page(`/run/${DAY.poison}/revert`);
  assert.doesNotMatch(preview, /method="post"/, "a read-only console shows no form");
  assert.match(preview, /--write/);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await s.page("/memory/user.prefs/restore?rev=1"));
  assert.equal(csrf, null);
  for (const action of ["/memory/user.prefs/restore", `/run/${DAY.poison}/revert`]) {
    const r = await s.fetch(action, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: s.origin },
      body: "rev=1&head=2&plan=x",
    });
    const text = await r.text();
    assert.equal(r.status, 403, action);
    assert.match(text, /agentmem serve --dir &lt;the same directory&gt; --write/);
  }
  assert.equal((await history(store, "user.prefs")).length, 2);
  assert.equal((await store.read("user.prefs")).description, HOSTILE.description);
});

Deno.test("serve refuses a wildcard --host, a bad --port and --write with --read-only (exit 2), and warns off loopback", async () => {
  await using tmp = await tempDir("agentmem-console-");
  await poisonedDay(tmp.path);
  const { cli } = await import("../_lib/cli.ts");
  for (
    const args of [["--host", "0.0.0.0"], ["--host", "::"], ["--port", "70000"], ["--port", "x"], [
      "--write",
      "--read-only",
    ]]
  ) {
    const r = await cli(tmp.path, ["serve", "--dir", tmp.path, ...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stdout, "");
  }
  const { hostWarning } = await import("../../cli/serve/listen.ts");
  assert.equal(hostWarning("127.0.0.1", false), undefined);
  assert.equal(hostWarning("localhost", true), undefined);
  assert.match(hostWarning("192.0.2.7", true)!, /^warning: serving on 192\.0\.2\.7, not loopback/);
});
