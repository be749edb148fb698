// Where the nats-server binaries the tests, the benchmark and the fault harness run are: the
// system's (Debian's 2.9), or 2.10.27 from the cache `.ci/nats-2.10.sh` fills.

const CANDIDATES = ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"];

/**
 * The nats-server binary: `$NATS_SERVER` when set (and only then), else a Debian location or
 * `nats-server` on PATH; `undefined` when there is none.
 */
export function natsServerBinary(): string | undefined {
  const fromEnv = Deno.env.get("NATS_SERVER");
  for (const path of fromEnv ? [fromEnv] : CANDIDATES) {
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch {
      // not here
    }
  }
  if (fromEnv) return undefined;
  try {
    const out = new Deno.Command("sh", { args: ["-c", "command -v nats-server"], stdout: "piped" })
      .outputSync();
    const path = new TextDecoder().decode(out.stdout).trim();
    return out.success && path ? path : undefined;
  } catch {
    return undefined;
  }
}

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
