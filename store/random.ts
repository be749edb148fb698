// Random identifiers: run ids, proposal ids, tokens and the names of files in flight, all as
// lowercase hexadecimal from the platform's cryptographic generator.

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** `bytes` random bytes as `2 * bytes` lowercase hexadecimal digits. */
export function randomHex(bytes: number): string {
  let hex = "";
  for (const b of crypto.getRandomValues(new Uint8Array(bytes))) hex += HEX[b];
  return hex;
}
