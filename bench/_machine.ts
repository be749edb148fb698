// The machine a benchmark ran on, for the report.

import { natsServerBinary } from "../tests/_lib/nats_server.ts";
import type { Machine } from "./_results.ts";

/** Describes this machine; `natsVersion` is the server's own report when connected. */
export async function machineInfo(natsVersion: string | undefined): Promise<Machine> {
  return {
    cpu: await cpuModel(),
    cores: navigator.hardwareConcurrency,
    os: `${await osName()} (${Deno.build.os} ${Deno.build.arch}, kernel ${Deno.osRelease()})`,
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    natsServer: natsVersion ?? await natsServerVersion(),
    loadAverage: Deno.loadavg().map((n) => Math.round(n * 100) / 100),
  };
}

async function cpuModel(): Promise<string> {
  try {
    const text = await Deno.readTextFile("/proc/cpuinfo");
    return /^model name\s*:\s*(.+)$/m.exec(text)?.[1]?.trim() ?? "unknown";
  } catch {
    return "unknown";
  }
}

async function osName(): Promise<string> {
  try {
    const text = await Deno.readTextFile("/etc/os-release");
    return /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(text)?.[1] ?? Deno.build.os;
  } catch {
    return Deno.build.os;
  }
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
