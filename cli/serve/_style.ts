// The console's one stylesheet, served from the console itself (the CSP allows no other origin
// and no inline style).

/** `/console.css`. */
export const STYLE = `
:root { color-scheme: light; --ink: #1d2125; --muted: #5f6b76; --line: #d8dde2; --bg: #f7f8fa;
  --accent: #1f5fbf; --bad: #b3261e; --bad-bg: #fdecea; --good-bg: #e8f5e9; --add-bg: #e6ffec;
  --del-bg: #ffebe9; --warn-bg: #fff8e1; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
  background: var(--bg); }
header { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1.2rem; background: #fff;
  border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header .brand { font-weight: 700; color: var(--ink); text-decoration: none; }
header nav { display: flex; gap: 1rem; }
header .where { color: var(--muted); margin-left: auto; }
.mode { padding: .1rem .5rem; border-radius: 1rem; font-size: 12px; font-weight: 600; }
.mode-read { background: var(--good-bg); } .mode-write { background: var(--bad-bg); color: var(--bad); }
main { padding: 1rem 1.2rem 3rem; max-width: 1400px; }
h1 { font-size: 20px; margin: .2rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 16px; margin: 1.5rem 0 .5rem; }
a { color: var(--accent); }
table { border-collapse: collapse; background: #fff; border: 1px solid var(--line); width: 100%; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top;
  overflow-wrap: break-word; }
th, time, .tainted, td.op, .key, .run { white-space: nowrap; }
th { background: #eef1f4; font-weight: 600; font-size: 12px; }
tr.row-tainted td { background: #fff4f2; }
.tainted { background: var(--bad); color: #fff; border-radius: 3px; padding: 0 .35rem; font-size: 12px;
  font-weight: 600; }
.hidden-char { background: #ffe08a; color: #5a4000; border-radius: 2px; padding: 0 .2rem;
  font: 11px ui-monospace, monospace; }
.none, .same { color: var(--muted); }
.key, .run, .call, code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
pre.body, pre.command { background: #fff; border: 1px solid var(--line); padding: .7rem; }
.description { font-weight: 600; }
.snippet { color: var(--muted); font-size: 12px; }
.notice { padding: .6rem .8rem; border-radius: 4px; border: 1px solid var(--line); background: #fff; }
.notice-warn { background: var(--warn-bg); } .notice-error { background: var(--bad-bg); }
.op-delete { color: var(--bad); font-weight: 600; }
.redacted { color: var(--muted); font-style: italic; }
form { margin: .8rem 0; }
form.filters label, form.search label { margin-right: .6rem; }
input[type=text], input[type=search], select { padding: .25rem .4rem; border: 1px solid var(--line);
  border-radius: 3px; font: inherit; }
input[type=search] { width: 28rem; max-width: 100%; }
button, a.button { padding: .3rem .8rem; border: 1px solid var(--accent); background: var(--accent);
  color: #fff; border-radius: 3px; font: inherit; cursor: pointer; text-decoration: none; display: inline-block; }
button.danger { background: var(--bad); border-color: var(--bad); }
.diff { margin: .6rem 0; }
.diff table { font-size: 13px; }
.diff tr.add td { background: var(--add-bg); } .diff tr.del td { background: var(--del-bg); }
.diff tr.hunk td { background: #eef1f4; color: var(--muted); font-size: 12px; }
.diff td.ln { width: 3.5rem; color: var(--muted); text-align: right; font-family: ui-monospace, monospace; }
.diff td.mark { width: 1.2rem; font-family: ui-monospace, monospace; }
.diff-sides span { margin-right: 1rem; font-weight: 600; }
.diff-sides .add { color: #116329; } .diff-sides .del { color: var(--bad); }
.diff-description { margin-bottom: .6rem; } .diff-description th { width: 7rem; }
ul.plan, ul.conflicts { padding-left: 1.2rem; } ul.plan li { margin-bottom: .4rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
ul.tiles li { margin: .3rem 0; }
.pager a { margin: 0 .5rem; }
`;
