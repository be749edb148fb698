// The machine a benchmark ran on, for the report.

import { natsServerBinary } from "../tests/_lib/binaries.ts";

/** Where the numbers came from. */
export type Machine = Awaited<ReturnType<typeof machineInfo>>;

/** Describes this machine; `natsVersion` is the server's own report when connected. */
export async function machineInfo(natsVersion: string | undefined) {
  const os = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(await readOr("/etc/os-release"))?.[1] ??
    Deno.build.os;
  return {
    cpu: /^model name\s*:\s*(.+)$/m.exec(await readOr("/proc/cpuinfo"))?.[1]?.trim() ?? "unknown",
    cores: navigator.hardwareConcurrency,
    os: `${os} (${Deno.build.os} ${Deno.build.arch}, kernel ${Deno.osRelease()})`,
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    natsServer: natsVersion ?? await natsServerVersion(),
    loadAverage: Deno.loadavg().map((n) => Math.round(n * 100) / 100),
  };
}

function readOr(path: string): Promise<string> {
  return Deno.readTextFile(path).catch(() => "");
}

async function natsServerVersion(): Promise<string> {
  const bin = natsServerBinary();
  if (bin === undefined) return "not installed";
  try {
    const out = await new Deno.Command(bin, { args: ["--version"], stdout: "piped" }).output();
    return new TextDecoder().decode(out.stdout).trim().replace(/^nats-server:\s*/, "") || "unknown";
  } catch {
    return "unknown";
  }
}
