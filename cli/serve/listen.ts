// `agentmem serve`'s address options, checked before the store is opened. Kept apart from the
// console (mod.ts) so the CLI checks them without loading the web framework.

/** The default address: loopback. */
export const DEFAULT_HOST = "127.0.0.1";

/**
 * Checks `--port` and `--host` as given on the command line.
 *
 * @throws {RangeError} naming what a legal value looks like.
 */
export function listenOptions(
  port: string | undefined,
  host: string | undefined,
): { port: number; host: string } {
  const p = port ?? "0";
  if (!/^[0-9]{1,5}$/.test(p) || Number(p) > 65535) {
    throw new RangeError(
      `--port must be a port number from 0 to 65535 (0 picks a free one), got ${JSON.stringify(p)}`,
    );
  }
  const h = host ?? DEFAULT_HOST;
  if (h === "" || h === "0.0.0.0" || h === "::" || h === "[::]" || !/^[A-Za-z0-9.:-]+$/.test(h)) {
    throw new RangeError(
      `--host must name one address of this machine (an IP address or a host name, default ${DEFAULT_HOST}), not ${
        JSON.stringify(h)
      }: the console checks that every request names the address it is bound to, which a wildcard address cannot be`,
    );
  }
  return { port: Number(p), host: h };
}

/** Whether `host` is a loopback address or name. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The warning printed when the console is bound off loopback; `undefined` on loopback. */
export function hostWarning(host: string, write: boolean): string | undefined {
  if (isLoopback(host)) return undefined;
  return `warning: serving on ${host}, not loopback: anyone who can reach it and learns the token can read the store${
    write ? " and change it" : ""
  }, and plain HTTP carries the token unencrypted`;
}
