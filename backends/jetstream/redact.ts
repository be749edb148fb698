// Redaction in a jetstream store. A version's bytes live in one message (on the key's subject in
// the bucket until the mover packs it, then in a pack on its history subject), and the streams
// let only a subject's oldest messages go (a purge): so the key's versions are moved first, then
// its history subject is written again as fresh packs, the redacted versions' lines keeping the
// entry's digest and who, when and why (pack.ts), and every older message is purged. Each new
// pack carries the key's final state, so a mover that appends meanwhile chains on right, and
// readers take each version's newest copy: a rewrite cut short leaves a readable history, which
// the next redaction or purge of the key finishes.

import { ConfigError, NotFoundError, UnavailableError } from "../../store/errors.ts";
import { digestOf } from "../../store/chain.ts";
import type { Call } from "../../store/backend.ts";
import type { Redaction } from "../../store/types.ts";
import { quote } from "../../store/text.ts";
import { isWrongLastSequence, PREFIX } from "./errors.ts";
import type { Handle } from "./handle.ts";
import { readSubject, type Stored } from "./messages.ts";
import { emptyKey, type HistoryTarget, moveKey } from "./mover.ts";
import {
  decodePack,
  historyMessage,
  type KeyState,
  MAX_PACK_BYTES,
  PACK,
  packData,
  type Packed,
  packHeaders,
  setState,
} from "./pack.ts";

// A rewrite that lost its race to a mover or a retention cut starts over at most this often.
const MAX_ATTEMPTS = 4;

/** What to redact (see `HistoryOps.redact`). */
export interface RedactRequest {
  readonly revisions: readonly string[];
  readonly redaction: Redaction;
  readonly orCut?: boolean | undefined;
}

/** Redacts `o.revisions` of `key`. */
export function redactJetStream(
  h: Handle,
  t: HistoryTarget,
  k: { readonly key: string; readonly o: RedactRequest },
  call: Call,
): Promise<void> {
  const { key, o } = k;
  return h.run({ op: "update", key, call, timeouts: 4 }, async () => {
    const want = new Set(o.revisions.map(Number));
    // Every version into the history stream, and off the key's subject (all but a live head).
    const { head } = await moveKey(t, { key });
    if (head?.marker === true) await emptyKey(t, { key, marker: head.rev });
    const left = await readSubject(t, {
      stream: t.stream,
      subject: t.subjectPrefix + key,
      after: 0,
    });
    if (left.some((m) => want.has(m.seq))) {
      throw new UnavailableError(
        `${PREFIX} Cannot redact memory ${
          quote(key)
        }: its versions are still being moved to the history stream; try again`,
        { key },
      );
    }
    for (let attempt = 1;; attempt++) {
      const all = await readSubject(t, {
        stream: t.hstream,
        subject: t.hsubjectPrefix + key,
        after: 0,
      });
      const plan = rewrite(key, { all, want, o });
      try {
        await publishRewrite(t, { key, all, plan });
        return;
      } catch (e) {
        if (!isWrongLastSequence(e) || attempt >= MAX_ATTEMPTS) throw e;
      }
    }
  });
}

interface Plan {
  readonly versions: Packed[];
  readonly state: KeyState;
}

// The key's versions above its retention record, each its newest copy, with `want` redacted
// (and, with `orCut`, those of chain format 1 cut under a retention record).
function rewrite(
  key: string,
  r: {
    readonly all: readonly Stored[];
    readonly want: ReadonlySet<number>;
    readonly o: RedactRequest;
  },
): Plan {
  const byRev = new Map<number, Packed>();
  let state: KeyState | undefined;
  for (const m of r.all) {
    const h = historyMessage(m.header);
    if (h === undefined) continue;
    state = h.state;
    if (h.kind !== "pack") continue;
    for (const v of decodePack(m.data, h.format)) byRev.set(v.rev, v);
  }
  if (state === undefined) throw notKept(key, [...r.want][0] ?? 0);
  let cut = state.cut;
  const cutRev = cut?.rev ?? 0;
  const kept = [...byRev.values()].filter((v) => v.rev > cutRev).sort((a, b) => a.rev - b.rev);
  for (const rev of r.want) {
    const v = kept.find((x) => x.rev === rev);
    if (v === undefined || v.record === undefined) throw notKept(key, rev);
    if (v.record.format === 1) {
      if (r.o.orCut !== true) throw format1(key, rev);
      cut = { rev: v.rev, seq: v.record.seq ?? 0, hash: v.record.hash };
    }
  }
  const versions = kept
    .filter((v) => v.rev > (cut?.rev ?? 0))
    .map((v) =>
      !r.want.has(v.rev) || v.redacted !== undefined || v.marker
        ? v
        : { ...v, entry: new Uint8Array(0), redacted: { ...digestOf(v.entry), ...r.o.redaction } }
    );
  const recorded = versions.filter((v) => v.record !== undefined);
  return {
    versions,
    state: {
      ...state,
      cut,
      held: recorded.length,
      packs: packsOf(versions).length,
      oldestAt: packsOf(versions)[0]?.at(-1)?.at,
    },
  };
}

// `versions` (oldest first) in packs of at most MAX_PACK_BYTES.
function packsOf(versions: readonly Packed[]): Packed[][] {
  const out: Packed[][] = [];
  let bytes = 0;
  for (const v of versions) {
    const size = v.entry.length + 1024;
    const last = out.at(-1);
    if (last === undefined || bytes + size > MAX_PACK_BYTES) {
      out.push([v]);
      bytes = size;
    } else {
      last.push(v);
      bytes += size;
    }
  }
  return out;
}

// Writes the plan's packs after the subject's last message, each expecting the one before and
// carrying the key's final state, then purges every message older than the first.
async function publishRewrite(
  t: HistoryTarget,
  w: { readonly key: string; readonly all: readonly Stored[]; readonly plan: Plan },
): Promise<void> {
  const subject = t.hsubjectPrefix + w.key;
  let last = w.all.at(-1)?.seq ?? 0;
  let first: number | undefined;
  const packs = packsOf(w.plan.versions);
  if (packs.length === 0) {
    // Nothing above the cut: a retention record alone says where the chain stands.
    const h = t.headers();
    h.set(PACK.kind, "cut");
    setState(h, w.plan.state);
    first = (await t.js.publish(subject, undefined, {
      headers: h,
      expect: { lastSubjectSequence: last },
    })).seq;
  }
  for (const pack of packs) {
    const h = t.headers();
    packHeaders(h, pack);
    setState(h, w.plan.state);
    const ack = await t.js.publish(subject, packData(pack), {
      headers: h,
      expect: { lastSubjectSequence: last },
    });
    first ??= ack.seq;
    last = ack.seq;
  }
  if (first !== undefined) await t.jsm.streams.purge(t.hstream, { filter: subject, seq: first });
}

function notKept(key: string, rev: number): NotFoundError {
  return new NotFoundError(
    `${PREFIX} Cannot redact version ${rev} of memory ${
      quote(key)
    }: it is not kept (pruned meanwhile)`,
    { key },
  );
}

function format1(key: string, rev: number): ConfigError {
  return new ConfigError(
    `${PREFIX} Cannot redact version ${rev} of memory ${
      quote(key)
    }: it is in chain format 1, whose hash covers its bytes, so it could not be verified without them; purgeKey removes such versions under a retention record`,
  );
}
