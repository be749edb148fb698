// Which nats-server binary runs a given version: 2.10.27 from the cache `.ci/nats-2.10.sh`
// fills (or $NATS_SERVER_210), 2.9 from the system's Debian package.

/** Where `.ci/nats-2.10.sh` puts nats-server 2.10.27. */
export function nats210Path(): string {
  const cache = Deno.env.get("AGENTMEM_CACHE") ??
    `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME") ?? ""}/.cache`}/agentmem`;
  return `${cache}/nats-2.10.27/root/usr/sbin/nats-server`;
}

/** The nats-server binary for a version: $NATS_SERVER_210 or the cache for 2.10.27, the system's for 2.9. */
export function serverBinary(version: string): string | undefined {
  const candidates = version.startsWith("2.10")
    ? [Deno.env.get("NATS_SERVER_210"), nats210Path()]
    : ["/usr/sbin/nats-server", "/usr/bin/nats-server"];
  for (const path of candidates) {
    if (!path) continue;
    try {
      const out = new Deno.Command(path, { args: ["--version"], stdout: "piped" }).outputSync();
      if (out.success && new TextDecoder().decode(out.stdout).includes(`v${version}`)) return path;
    } catch {
      // not here
    }
  }
  return undefined;
}
