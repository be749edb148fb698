// The machine a benchmark ran on, for the report.

/** Where the numbers came from. */
export type Machine = Awaited<ReturnType<typeof machineInfo>>;

/** Describes this machine; `natsVersion` is the server's own report, when a suite used NATS. */
export async function machineInfo(natsVersion: string | undefined) {
  const readOr = (path: string) => Deno.readTextFile(path).catch(() => "");
  const os = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(await readOr("/etc/os-release"))?.[1] ??
    Deno.build.os;
  return {
    cpu: /^model name\s*:\s*(.+)$/m.exec(await readOr("/proc/cpuinfo"))?.[1]?.trim() ?? "unknown",
    cores: navigator.hardwareConcurrency,
    os: `${os} (${Deno.build.os} ${Deno.build.arch}, kernel ${Deno.osRelease()})`,
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    natsServer: natsVersion ?? "not used",
    loadAverage: Deno.loadavg().map((n) => Math.round(n * 100) / 100),
  };
}
