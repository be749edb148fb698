// A pack: versions of one key moved out of the bucket's stream into its history stream, oldest
// first, in one message (one write moves many versions). Each version is a JSON line (its
// revision, the server's time, its record's headers, its entry's length) and then the entry's
// bytes. The pack's own headers say which revisions it holds, so a mover can tell what is moved
// without reading the values.

import type { MsgHdrs } from "@nats-io/nats-core";
import { isChainHash } from "../../store/chain.ts";
import { type Link, readRecord, setRecord, type VersionRecord } from "./provenance.ts";

/** The pack headers. */
export const PACK = {
  /** The format, `1`. */
  format: "Agentmem-Pack",
  /** The revision of the oldest version in the pack. */
  from: "Agentmem-From",
  /** The revision of the newest. */
  to: "Agentmem-To",
  /** The server's time of the newest (ISO 8601 UTC), for retention. */
  lastAt: "Agentmem-Last-At",
  /** How many recorded versions it holds, for retention. */
  count: "Agentmem-Count",
  /** The newest recorded version's hash: where the key's next version chains to. */
  lastHash: "Agentmem-Last-Hash",
} as const;

/** The most bytes a pack's value may take; a move that holds more writes several packs. */
export const MAX_PACK_BYTES = 512 * 1024;

/** One moved version. */
export interface Packed {
  /** Its revision: the stream sequence it had in the bucket's stream. */
  readonly rev: number;
  /** The server's time it was written at (ISO 8601 UTC, microseconds). */
  readonly at: string;
  /** Its record; `undefined` for a message written without one (history off, or by hand). */
  readonly record: VersionRecord | undefined;
  /** Set when the message had a record that could not be read. */
  readonly damaged?: string | undefined;
  /** The entry it wrote (empty for a delete). */
  readonly entry: Uint8Array;
}

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder("utf-8", { fatal: true });

/**
 * The pack of `versions` (oldest first): its value and headers (made by `headers`, the NATS
 * client's, which the opener loaded).
 */
export function encodePack(
  versions: readonly Packed[],
  headers: () => MsgHdrs,
): { data: Uint8Array; headers: MsgHdrs } {
  const parts: Uint8Array[] = [];
  for (const v of versions) {
    const h: Record<string, string> = {};
    if (v.record !== undefined) {
      setRecord({ set: (k: string, value: string) => (h[k] = value) }, v.record);
    }
    const line = JSON.stringify({
      rev: v.rev,
      at: v.at,
      len: v.entry.length,
      h,
      damaged: v.damaged,
    });
    parts.push(ENCODER.encode(line + "\n"), v.entry);
  }
  const data = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    data.set(p, at);
    at += p.length;
  }
  const h = headers();
  h.set(PACK.format, "1");
  h.set(PACK.from, String(versions[0]?.rev ?? 0));
  h.set(PACK.to, String(versions.at(-1)?.rev ?? 0));
  h.set(PACK.lastAt, versions.at(-1)?.at ?? "");
  h.set(PACK.count, String(versions.filter((v) => v.record !== undefined).length));
  const recorded = versions.findLast((v) => v.record !== undefined)?.record;
  if (recorded !== undefined) h.set(PACK.lastHash, recorded.hash);
  return { data, headers: h };
}

/** What a pack's headers say of it. */
export interface PackInfo {
  readonly from: number;
  readonly to: number;
  /** The server's time of its newest version. */
  readonly lastAt: string;
  /** How many recorded versions it holds. */
  readonly count: number;
  /** Where the key's next version chains to, when the pack holds a recorded version. */
  readonly last: Link | undefined;
}

/** What a pack's headers say; `undefined` when it is no pack. */
export function packInfo(h: MsgHdrs | undefined): PackInfo | undefined {
  if (h === undefined || h.get(PACK.format) !== "1") return undefined;
  const from = Number(h.get(PACK.from));
  const to = Number(h.get(PACK.to));
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 1 || to < from) {
    return undefined;
  }
  const hash = h.get(PACK.lastHash);
  const count = Number(h.get(PACK.count));
  return {
    from,
    to,
    lastAt: h.get(PACK.lastAt),
    count: Number.isSafeInteger(count) && count >= 0 ? count : 0,
    last: isChainHash(hash) ? { hash } : undefined,
  };
}

/**
 * The versions in a pack, oldest first.
 *
 * @throws {Error} (a plain one, with the reason) when the pack is damaged.
 */
export function decodePack(data: Uint8Array): Packed[] {
  const out: Packed[] = [];
  let at = 0;
  while (at < data.length) {
    const end = data.indexOf(0x0a, at);
    if (end < 0) throw new Error("a packed version's line is cut short");
    let raw: { rev?: unknown; at?: unknown; len?: unknown; h?: unknown; damaged?: unknown };
    try {
      raw = JSON.parse(DECODER.decode(data.subarray(at, end)));
    } catch {
      throw new Error("a packed version's line is not valid JSON");
    }
    const { rev, len, h } = raw;
    if (
      !Number.isSafeInteger(rev) || (rev as number) < 1 || typeof raw.at !== "string" ||
      !Number.isSafeInteger(len) || (len as number) < 0 ||
      end + 1 + (len as number) > data.length ||
      h === null || typeof h !== "object" || Array.isArray(h)
    ) throw new Error("a packed version's line is damaged");
    const fields = h as Record<string, unknown>;
    const read = readRecord({
      has: (name) => typeof fields[name] === "string",
      get: (name) => String(fields[name] ?? ""),
    });
    const entry = data.slice(end + 1, end + 1 + (len as number));
    out.push({
      rev: rev as number,
      at: raw.at,
      record: read.record,
      damaged: read.record === undefined
        ? (read.damaged ?? (typeof raw.damaged === "string" ? raw.damaged : undefined))
        : undefined,
      entry,
    });
    at = end + 1 + (len as number);
  }
  return out;
}
