// What the history stream holds of a key, on its subject `$KVH.<bucket>.<prefix>.<key>`: packs of
// versions moved out of the bucket's stream, oldest first, and retention records. Every such
// message carries the key's history state after it (where the next version chains to, the
// retention record in force, what the packs hold), so the subject's last message alone says where
// the key stands. A pack's value is one JSON line per version (its revision, the server's time,
// its record's headers, its entry's length) followed by the entry's bytes.

import type { MsgHdrs } from "@nats-io/nats-core";
import { isChainHash } from "../../store/chain.ts";
import type { Redaction, Version } from "../../store/types.ts";
import type { EntryDigest } from "../../store/chain.ts";
import { readRecord, setRecord, type VersionRecord } from "./provenance.ts";

/** The headers of the history stream's messages. */
export const PACK = {
  /** `2` for a pack, `cut` for a retention record (`1`: a pack written before format 2). */
  kind: "Agentmem-Pack",
  /** The revision of the oldest version in the pack. */
  from: "Agentmem-From",
  /** The newest revision moved so far (the pack's newest). */
  to: "Agentmem-To",
  /** The server's time of the pack's newest version (ISO 8601 UTC). */
  lastAt: "Agentmem-Last-At",
  /** How many recorded versions the pack holds. */
  count: "Agentmem-Count",
  /** Where the key's next version chains to: `<seq> <hash> <op>` of its newest recorded version. */
  tip: "Agentmem-Tip",
  /** The retention record in force: `<revision> <seq> <hash>` of the newest version cut. */
  cut: "Agentmem-Cut",
  /** How many recorded versions the key's packs hold. */
  held: "Agentmem-Held",
  /** How many packs the key's history subject holds. */
  packs: "Agentmem-Packs",
  /** The server's time of the newest version of the oldest pack held (for retention). */
  oldestAt: "Agentmem-Oldest-At",
  /** Format 1 only: the newest recorded version's hash. */
  lastHash: "Agentmem-Last-Hash",
} as const;

/** The most bytes a pack's value may take; a move that holds more writes several packs. */
export const MAX_PACK_BYTES = 512 * 1024;

/** One moved version. */
export interface Packed {
  /** Its revision: the stream sequence it had in the bucket's stream. */
  readonly rev: number;
  /**
   * When it was written (ISO 8601 UTC): the server's time, except in a pack of format 1, which
   * kept the writer's clock (`serverTime` false).
   */
  readonly at: string;
  readonly serverTime: boolean;
  /** Its record; `undefined` for a message written without one (history off, or by hand). */
  readonly record: VersionRecord | undefined;
  /** Set when the message had a record that could not be read. */
  readonly damaged?: string | undefined;
  /** The entry it wrote (empty for a delete, and for a delete marker written by hand). */
  readonly entry: Uint8Array;
  /** Whether it is a delete marker (with a record or without: a raw KV delete). */
  readonly marker: boolean;
  /**
   * Set when the version was redacted (redact.ts): its entry is gone, and this keeps the entry's
   * digest (which its hash covers) and who, when and why.
   */
  readonly redacted?: (EntryDigest & Redaction) | undefined;
}

/** Where a key's chain stands. */
export interface ChainTip {
  /** Its place in the chain; 0 for a version of format 1. */
  readonly seq: number;
  readonly hash: string;
  /** What it did (unknown in a pack of format 1). */
  readonly op: Version["op"] | undefined;
}

/** A retention record: every version at or below `rev` was cut, the newest of them this one. */
export interface CutRecord {
  readonly rev: number;
  readonly seq: number;
  readonly hash: string;
}

/** A key's history state, as the newest message on its history subject carries it. */
export interface KeyState {
  /** The newest revision moved (0: none). */
  readonly to: number;
  readonly tip: ChainTip | undefined;
  readonly cut: CutRecord | undefined;
  /** How many recorded versions its packs hold (unknown after a pack of format 1: -1). */
  readonly held: number;
  /** How many packs it has (unknown after a pack of format 1: -1). */
  readonly packs: number;
  /** The server's time of the newest version of its oldest pack, when it has a pack. */
  readonly oldestAt: string | undefined;
}

/** A key with nothing in the history stream. */
export const EMPTY_STATE: KeyState = Object.freeze({
  to: 0,
  tip: undefined,
  cut: undefined,
  held: 0,
  packs: 0,
  oldestAt: undefined,
});

/** What one message of the history stream is. */
export type HistoryMessage =
  | { readonly kind: "pack"; readonly format: 1 | 2; readonly state: KeyState }
  | { readonly kind: "cut"; readonly state: KeyState };

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder("utf-8", { fatal: true });

/**
 * The pack of `versions` (oldest first) moved after `before`: its value, its headers (made by
 * `headers`, the NATS client's, which the opener loaded) and the key's state after it.
 */
export function encodePack(
  versions: readonly Packed[],
  o: { readonly before: KeyState; readonly headers: () => MsgHdrs },
): { data: Uint8Array; headers: MsgHdrs; state: KeyState } {
  const data = packData(versions);
  const recorded = versions.filter((v) => v.record !== undefined);
  const newest = recorded.at(-1)?.record;
  const lastAt = versions.at(-1)?.at ?? "";
  const { before } = o;
  const state: KeyState = {
    to: versions.at(-1)?.rev ?? before.to,
    tip: newest === undefined
      ? before.tip
      : { seq: newest.seq ?? 0, hash: newest.hash, op: newest.op },
    cut: before.cut,
    held: before.held < 0 ? -1 : before.held + recorded.length,
    packs: before.packs < 0 ? -1 : before.packs + 1,
    oldestAt: before.oldestAt ?? lastAt,
  };
  const h = o.headers();
  packHeaders(h, versions);
  setState(h, state);
  return { data, headers: h, state };
}

/** The value of a pack of `versions` (oldest first): a line each, then its entry's bytes. */
export function packData(versions: readonly Packed[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const v of versions) {
    const h: Record<string, string> = {};
    if (v.record !== undefined) {
      setRecord({ set: (k: string, value: string) => (h[k] = value) }, v.record);
    }
    const red = v.redacted;
    const line = JSON.stringify({
      rev: v.rev,
      at: v.at,
      len: v.entry.length,
      h,
      ...(v.marker ? { del: true } : {}),
      ...(v.damaged === undefined ? {} : { damaged: v.damaged }),
      ...(red === undefined ? {} : {
        red: {
          sha256: red.sha256,
          len: red.length,
          at: red.at,
          ...(red.actor === undefined ? {} : { actor: red.actor }),
          reason: red.reason,
        },
      }),
    });
    parts.push(ENCODER.encode(line + "\n"), v.entry);
  }
  const data = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    data.set(p, at);
    at += p.length;
  }
  return data;
}

/** Sets the headers that describe a pack of `versions` (oldest first) on `h`. */
export function packHeaders(h: MsgHdrs, versions: readonly Packed[]): void {
  h.set(PACK.kind, "2");
  h.set(PACK.from, String(versions[0]?.rev ?? 0));
  h.set(PACK.lastAt, versions.at(-1)?.at ?? "");
  h.set(PACK.count, String(versions.filter((v) => v.record !== undefined).length));
}

/**
 * A retention record after `before`, cutting at `cut` (none: the key's history expired whole,
 * its tip cut with it): its headers and the key's state after it. A whole expiry keeps one header.
 */
export function encodeCut(
  cut: CutRecord,
  o: {
    readonly before: KeyState;
    readonly whole: boolean;
    /** What the packs left hold: their recorded versions, their number, the oldest's time. */
    readonly left: Pick<KeyState, "held" | "packs" | "oldestAt">;
    readonly headers: () => MsgHdrs;
  },
): { headers: MsgHdrs; state: KeyState } {
  const h = o.headers();
  h.set(PACK.kind, "cut");
  if (o.whole) {
    h.set(PACK.cut, `${cut.rev} ${cut.seq} ${cut.hash}`);
    return { headers: h, state: expiredState(cut) };
  }
  const state: KeyState = { ...o.before, ...o.left, cut };
  setState(h, state);
  return { headers: h, state };
}

function expiredState(cut: CutRecord): KeyState {
  return {
    to: cut.rev,
    tip: { seq: cut.seq, hash: cut.hash, op: "delete" },
    cut,
    held: 0,
    packs: 0,
    oldestAt: undefined,
  };
}

/** Sets the headers of the key's state after a message on `h`. */
export function setState(h: MsgHdrs, s: KeyState): void {
  h.set(PACK.to, String(s.to));
  if (s.tip !== undefined) h.set(PACK.tip, `${s.tip.seq} ${s.tip.hash} ${s.tip.op ?? "-"}`);
  if (s.cut !== undefined) h.set(PACK.cut, `${s.cut.rev} ${s.cut.seq} ${s.cut.hash}`);
  h.set(PACK.held, String(s.held));
  h.set(PACK.packs, String(s.packs));
  if (s.oldestAt !== undefined) h.set(PACK.oldestAt, s.oldestAt);
}

/** What a message of the history stream is; `undefined` when it is nothing this library wrote. */
export function historyMessage(h: MsgHdrs | undefined): HistoryMessage | undefined {
  const kind = h?.get(PACK.kind);
  if (h === undefined || !kind) return undefined;
  if (kind === "1") return v1Pack(h);
  if (kind !== "2" && kind !== "cut") return undefined;
  const cut = cutOf(h.get(PACK.cut));
  if (kind === "cut" && cut !== undefined && !h.has(PACK.to)) {
    return { kind: "cut", state: expiredState(cut) };
  }
  const to = wholeNumber(h.get(PACK.to));
  const held = Number(h.get(PACK.held));
  const packs = Number(h.get(PACK.packs));
  if (to === undefined || (h.has(PACK.cut) && cut === undefined)) return undefined;
  const tip = tipOf(h.get(PACK.tip));
  if (h.has(PACK.tip) && tip === undefined) return undefined;
  const state: KeyState = {
    to,
    tip,
    cut,
    held: h.has(PACK.held) && Number.isSafeInteger(held) && held >= -1 ? held : -1,
    packs: h.has(PACK.packs) && Number.isSafeInteger(packs) && packs >= -1 ? packs : -1,
    oldestAt: h.get(PACK.oldestAt) || undefined,
  };
  return kind === "cut" ? { kind, state } : { kind: "pack", format: 2, state };
}

function v1Pack(h: MsgHdrs): HistoryMessage | undefined {
  const from = wholeNumber(h.get(PACK.from));
  const to = wholeNumber(h.get(PACK.to));
  if (from === undefined || to === undefined || from < 1 || to < from) return undefined;
  const hash = h.get(PACK.lastHash);
  return {
    kind: "pack",
    format: 1,
    state: {
      to,
      tip: isChainHash(hash) ? { seq: 0, hash, op: undefined } : undefined,
      cut: undefined,
      held: -1,
      packs: -1,
      oldestAt: undefined,
    },
  };
}

function wholeNumber(text: string): number | undefined {
  const n = Number(text);
  return /^[0-9]{1,16}$/.test(text) && Number.isSafeInteger(n) ? n : undefined;
}

function tipOf(text: string): ChainTip | undefined {
  const [seq, hash, op] = text.split(" ");
  const n = wholeNumber(seq ?? "");
  if (n === undefined || !isChainHash(hash)) return undefined;
  const known = op === "create" || op === "update" || op === "delete";
  return { seq: n, hash, op: known ? op : undefined };
}

function cutOf(text: string): CutRecord | undefined {
  const [rev, seq, hash] = text.split(" ");
  const r = wholeNumber(rev ?? "");
  const n = wholeNumber(seq ?? "");
  return r === undefined || n === undefined || !isChainHash(hash)
    ? undefined
    : { rev: r, seq: n, hash };
}

/**
 * The versions in a pack, oldest first (`format` 1: their times are their writers' clocks).
 *
 * @throws {Error} (a plain one, with the reason) when the pack is damaged.
 */
export function decodePack(data: Uint8Array, format: 1 | 2): Packed[] {
  const out: Packed[] = [];
  let at = 0;
  while (at < data.length) {
    const end = data.indexOf(0x0a, at);
    if (end < 0) throw new Error("a packed version's line is cut short");
    let raw: Record<string, unknown>;
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
    const redacted = redactedOf(raw.red);
    if (redacted === "bad" || (redacted !== undefined && (len as number) > 0)) {
      throw new Error("a packed version's redaction is damaged");
    }
    out.push({
      rev: rev as number,
      at: raw.at,
      serverTime: format === 2,
      record: read.record,
      damaged: read.record === undefined
        ? (read.damaged ?? (typeof raw.damaged === "string" ? raw.damaged : undefined))
        : undefined,
      entry,
      marker: raw.del === true || (read.record?.op === "delete"),
      ...(redacted === undefined ? {} : { redacted }),
    });
    at = end + 1 + (len as number);
  }
  return out;
}

function redactedOf(raw: unknown): (EntryDigest & Redaction) | undefined | "bad" {
  if (raw === undefined) return undefined;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return "bad";
  const r = raw as Record<string, unknown>;
  if (!isChainHash(r.sha256) || !Number.isSafeInteger(r.len) || (r.len as number) < 0) return "bad";
  if (typeof r.at !== "string" || typeof r.reason !== "string") return "bad";
  if (r.actor !== undefined && typeof r.actor !== "string") return "bad";
  return {
    sha256: r.sha256,
    length: r.len as number,
    at: r.at,
    ...(r.actor === undefined ? {} : { actor: r.actor as string }),
    reason: r.reason,
  };
}
