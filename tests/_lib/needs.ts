// The one place that knows which outside tools the tests, the benchmark and the fault harness
// use, how to tell whether this machine has them, and the command that installs each. Tests skip
// loudly without them (under CI=true they run and fail, never skip); a task stops with one line
// and exit status 2.

import { natsServerBinary, serverBinary } from "./binaries.ts";

/** A tool some tests or tasks need. */
// deno-fmt-ignore
export type Tool = "nats-server" | "nats-server 2.9.10" | "nats-server 2.10.27" | "root" | "ip" | "nft" | "unshare" | "fuse" | "gcc" | "chromium";

interface Requirement {
  readonly present: () => boolean;
  readonly install: string;
}

const REQUIREMENTS: Record<Tool, Requirement> = {
  "nats-server": {
    present: () => natsServerBinary() !== undefined,
    install: "install it with: apt-get install -y nats-server",
  },
  "nats-server 2.9.10": {
    present: () => serverBinary("2.9.10") !== undefined,
    install: "install Debian bookworm's package: apt-get install -y nats-server",
  },
  "nats-server 2.10.27": {
    present: () => serverBinary("2.10.27") !== undefined,
    install: "fetch it from Debian trixie with: bash .ci/nats-2.10.sh",
  },
  root: { present: () => Deno.uid() === 0, install: "run as root" },
  ip: {
    present: () => runs("ip", ["netns", "list"]),
    install: "install it with: apt-get install -y iproute2",
  },
  nft: {
    present: () => runs("nft", ["--version"]),
    install: "install it with: apt-get install -y nftables",
  },
  unshare: {
    present: () => runs("unshare", ["--version"]),
    install: "install it with: apt-get install -y util-linux",
  },
  // The power-cut file system (tests/powercut/pcfs.py): root, /dev/fuse, fusermount3 and
  // Debian's python with its libfuse 3 binding.
  fuse: {
    present: () =>
      Deno.uid() === 0 && exists("/dev/fuse") && runs("fusermount3", ["--version"]) &&
      runs("/usr/bin/python3", ["-c", "import pyfuse3, trio"]),
    install: "run as root where /dev/fuse exists, with: apt-get install -y fuse3 python3-pyfuse3",
  },
  gcc: {
    present: () => runs("gcc", ["--version"]),
    install: "install it with: apt-get install -y gcc libc6-dev",
  },
  // The console's browser tests drive Debian's Chromium (tests/console/_browser.ts).
  chromium: {
    present: () => exists("/usr/bin/chromium"),
    install: "install it with: apt-get install -y chromium",
  },
};

const known = new Map<Tool, boolean>();

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

function runs(cmd: string, args: string[]): boolean {
  try {
    return new Deno.Command(cmd, { args, stdin: "null", stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

function present(tool: Tool): boolean {
  let has = known.get(tool);
  if (has === undefined) known.set(tool, has = REQUIREMENTS[tool].present());
  return has;
}

/** What is missing of `tools`, with the command that installs each; `undefined` when none is. */
export function missingTools(...tools: Tool[]): string | undefined {
  const missing = tools.filter((t) => !present(t));
  if (missing.length === 0) return undefined;
  return missing.map((t) =>
    `${t === "root" ? "root is needed" : `${t} is missing`} (${REQUIREMENTS[t].install})`
  )
    .join("; ");
}

/** Whether the run is under CI, where a missing tool is a failure, never a skip. */
export const CI = Deno.env.get("CI") === "true";

const warned = new Set<string>();

/**
 * `Deno.test` options for tests that need `tools`: without them the tests are skipped, with one
 * loud line per `what`; under CI=true they run, and `assertTools` fails them.
 */
export function needs(what: string, ...tools: Tool[]): { ignore: boolean } {
  const why = missingTools(...tools);
  if (why === undefined || CI) return { ignore: false };
  if (!warned.has(what)) {
    warned.add(what);
    console.error(`\n%c!!! SKIPPING ${what}: ${why} !!!\n`, "color: red; font-weight: bold");
  }
  return { ignore: true };
}

/** Throws naming what is missing of `tools`, for the first line of a test body. */
export function assertTools(...tools: Tool[]): void {
  const why = missingTools(...tools);
  if (why !== undefined) throw new Error(why);
}

/** For a task's entry point: prints one line naming what is missing and exits with status 2. */
export function requireTools(task: string, ...tools: Tool[]): void {
  const why = missingTools(...tools);
  if (why === undefined) return;
  console.error(`${task}: cannot run: ${why}`);
  Deno.exit(2);
}
