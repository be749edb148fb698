// Runs cli.ts as a separate process, as an operator would, and captures its exit status and the
// exact bytes of stdout and stderr.

import assert from "node:assert/strict";
import { MAX_CONTENT_BYTES } from "../../mod.ts";
import { ROOT_CONFIG } from "./deno_child.ts";
import { spawnDeno } from "./spawn.ts";

const CLI = new URL("../../cli.ts", import.meta.url).pathname;

/** What one run of the CLI did. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutBytes: Uint8Array;
}

/** Options of one run. */
export interface CliRun {
  /** Standard input (text or bytes); none when omitted. */
  readonly stdin?: string | Uint8Array;
  /** Extra environment variables (the rest of the environment is cleared). */
  readonly env?: Record<string, string>;
}

/** Runs `cli.ts args...` in `cwd`. */
export async function cli(cwd: string, args: string[], run: CliRun = {}): Promise<CliResult> {
  await using child = spawnDeno(CLI, args, {
    name: `cli ${args[0] ?? ""}`,
    config: ROOT_CONFIG,
    cwd,
    ...(run.stdin === undefined ? {} : { input: run.stdin }),
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: Deno.env.get("HOME") ?? "",
      ...run.env,
    },
  });
  const { code, stdout, stderr, stdoutBytes } = await child.finished();
  return { code, stdout, stderr, stdoutBytes };
}

/** What a run must have printed (lines joined with "\n") and its exit code. */
export interface CliExpected {
  readonly code: number;
  readonly stdout?: string | string[];
  readonly stderr?: string | string[];
}

/** Asserts a run's exit code and, where given, the exact text of its stdout and stderr. */
export function expectCli(r: CliResult, want: CliExpected): void {
  for (const stream of ["stdout", "stderr"] as const) {
    const text = want[stream];
    if (text !== undefined) {
      assert.equal(r[stream], typeof text === "string" ? text : text.join("\n"), stream);
    }
  }
  assert.equal(r.code, want.code, `exit code; stderr:\n${r.stderr}`);
}

/** Every file name in `dir` with its bytes, for comparing a store before and after. */
export async function snapshotDir(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for await (const e of Deno.readDir(dir)) {
    const st = await Deno.lstat(`${dir}/${e.name}`);
    files.set(
      e.name,
      st.isFile ? `${st.mtime?.getTime()}:${await Deno.readTextFile(`${dir}/${e.name}`)}` : "other",
    );
  }
  return files;
}

/** Entries that stress the dump: hostile descriptions, 64 KiB bodies, every odd character. */
export const HOSTILE: ReadonlyArray<[string, string, string]> = [
  ["colon", 'say: "hi" - twice # not a comment', "---\nlooks like a header\n---\n"],
  ["dash", "- leading dash", ""],
  ["bidi", "\u202eevil\u2066 \u200b zero width \u{E0041}", "\u001b]52;c;aGk=\u0007\u009b2J"],
  ["yaml", "--- {a: [b]} &anchor *alias !!tag", "\r\n\u2028\u2029\ufeff"],
  ["quote", "'single' \"double\" `back` \\ backslash", "\u0000nul\u0001"],
  ["big.ascii", "64 KiB of ASCII", "x".repeat(MAX_CONTENT_BYTES)],
  ["big.utf8", "64 KiB of 4-byte runes", "\u{1F600}".repeat(MAX_CONTENT_BYTES / 4)],
  ["long.desc", "\u{1F600}".repeat(500), "emoji description at the limit"],
];
