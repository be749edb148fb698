// The jetstream backend's operations over a bound bucket: reads, listings and audits here; the
// writes, each its own version with history on, in create.ts, update.ts, delete.ts and (restore's
// and revert's) commit.ts; what they share (the Scope namespace, the capacity bound, the history
// step, every call's deadline and failure wording) in handle.ts.

import { NotFoundError, UnavailableError } from "../../store/errors.ts";
import { parseEntry, serializeValid } from "../../store/serialize.ts";
import type { Entry, Info, Item } from "../../store/types.ts";
import type { ValidWrite } from "../../store/validate.ts";
import type { BackendOps, Call, EntryVersion, Head, HistoryOps } from "../../store/backend.ts";
import type { Version } from "../../store/types.ts";
import type { StoreAudit } from "../../store/types.ts";
import { quote } from "../../store/text.ts";
import { auditOfScan } from "./audit.ts";
import { historyOps } from "./commit.ts";
import { create } from "./create.ts";
import { deleteKey } from "./delete.ts";
import { BACKEND, checkRevision, PREFIX, withAbort } from "./errors.ts";
import { aborted, type BackendConfig, Handle } from "./handle.ts";
import { Keeper } from "./keeper.ts";
import { getMessage, lookMessage, type Stored } from "./messages.ts";
import { hasRecord, isoOfNanos, readRecord, toVersion } from "./provenance.ts";
import { headerDescription, isMarkerMessage, scan } from "./scan.ts";
import { update } from "./update.ts";
import { jetStreamReview } from "./proposals.ts";
import { redactJetStream } from "./redact.ts";
import { JetStreamSidecar } from "./sidecar.ts";

const ENCODER = new TextEncoder();

/** The jetstream backend's raw operations. */
export class JetStreamBackend implements BackendOps {
  readonly info: Info;
  readonly history: HistoryOps | undefined;
  /** The search's vector cache and other records beside the memories (sidecar.ts). */
  readonly sidecar: JetStreamSidecar;
  readonly #h: Handle;

  constructor(config: BackendConfig & { readonly now: () => number }) {
    const { bucket, prefix } = config;
    this.sidecar = new JetStreamSidecar(config);
    this.info = { backend: BACKEND, location: prefix === "" ? bucket : `${bucket}/${prefix}` };
    this.#h = new Handle(config);
    const keeper = config.history instanceof Keeper ? config.history : undefined;
    this.history = keeper === undefined ? undefined : {
      ...historyOps(this.#h, { keeper, now: config.now }),
      index: (call) => this.#list(call, true),
      readLatest: (key, call) => this.#read(key, { call, withVersion: true }),
      review: jetStreamReview(this.#h, (key, call) => this.#head(key, call)),
      redact: (key, o, call) => redactJetStream(this.#h, keeper.target, { key, o }, call),
    };
  }

  async list(call: Call): Promise<Item[]> {
    return (await this.#list(call, false)).items;
  }

  // What list() shows and, `withHeads`, the newest version of each listed key from the same scan.
  #list(call: Call, withHeads: boolean): Promise<{ items: Item[]; heads: Version[] }> {
    const h = this.#h;
    return h.run({ op: "list", key: undefined, call }, async (d) => {
      const { latest, oldMarkers, markers } = await scan(h.ks, { d });
      await h.history.listed({ markers, oldMarkers }, d);
      const [items, heads]: [Item[], Version[]] = [[], []];
      for (const [key, entry] of latest) {
        // Listed when its header parses, as the file backend lists from headers alone.
        const description = headerDescription(entry.value, key);
        if (description === undefined) continue;
        items.push({ key, description });
        const { record } = withHeads ? readRecord(entry.headers) : {};
        if (record === undefined) continue;
        const at = isoOfNanos(entry.ns);
        heads.push(toVersion({ key, revision: entry.revision, at, description }, record));
      }
      return { items: items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)), heads };
    });
  }

  audit(call: Call): Promise<StoreAudit> {
    const h = this.#h;
    return h.run({ op: "audit", key: undefined, call }, async (d) => {
      const scanned = await scan(h.ks, { d, illegal: true });
      if (!scanned.complete) {
        throw new UnavailableError(
          `${PREFIX} Cannot audit the store: the scan was cut short before it saw every key`,
        );
      }
      return auditOfScan(scanned);
    });
  }

  // One request, whose timeout the NATS client enforces: no deadline machinery unless the caller
  // can abort.
  async read(key: string, call: Call): Promise<Entry> {
    return (await this.#read(key, { call, withVersion: false })).entry;
  }

  // The entry and, `withVersion`, the version record of the message it came from.
  async #read(
    key: string,
    o: { readonly call: Call; readonly withVersion: boolean },
  ): Promise<EntryVersion> {
    const { call, withVersion } = o;
    const h = this.#h;
    const m = await this.#latest(key, call);
    if (m === null || isMarkerMessage(m.header)) {
      throw new NotFoundError(
        `${PREFIX} Cannot read memory ${quote(key)}: no memory has this key`,
        { key },
      );
    }
    const entry = parseEntry(m.data, key);
    const revision = checkRevision(m.seq);
    h.history.saw(key, { revision, header: m.header });
    if (call.scope !== null && !call.signal?.aborted) call.scope.record(h.ns, key, revision);
    const { record } = withVersion ? readRecord(m.header) : {};
    const version = record &&
      toVersion({ key, revision, at: m.at, description: entry.description }, record);
    return { entry, version };
  }

  // The key's newest revision, without reading its entry (a held write's look at the key): of
  // the answer, only the headers that say so are read.
  async #head(key: string, call: Call): Promise<Head | undefined> {
    const h = this.#h;
    const q = { stream: h.c.stream, last_by_subj: h.subject(key) };
    const m = await this.#ask(key, call, () => lookMessage(h.c, q));
    if (m === null || isMarkerMessage(m.header)) return undefined;
    const revision = checkRevision(m.seq);
    return {
      namespace: h.ns,
      revision,
      version: hasRecord(m.header) ? String(revision) : undefined,
    };
  }

  // The key's latest message (a marker included), read as a read call.
  #latest(key: string, call: Call): Promise<Stored | null> {
    const h = this.#h;
    const q = { stream: h.c.stream, last_by_subj: h.subject(key) };
    return this.#ask(key, call, () => getMessage(h.c, q));
  }

  // What `read` (a read of `key`) finds, failing as a read call fails.
  async #ask<T>(key: string, call: Call, read: () => Promise<T>): Promise<T> {
    const h = this.#h;
    const c = { op: "read", key, call } as const;
    if (h.gone) await h.run(c, () => Promise.resolve());
    const work = read();
    try {
      return await (call.signal === undefined ? work : withAbort(work, {
        signal: call.signal,
        fail: (cause) => aborted(c, cause),
      }));
    } catch (err) {
      throw h.failure(c, err);
    }
  }

  create(w: ValidWrite, call: Call): Promise<void> {
    return this.#write(create, { w, call, op: "create" });
  }

  update(w: ValidWrite, call: Call): Promise<void> {
    return this.#write(update, { w, call, op: "update" });
  }

  #write(
    path: typeof create,
    x: { readonly w: ValidWrite; readonly call: Call; readonly op: "create" | "update" },
  ): Promise<void> {
    const { w, call, op } = x;
    return this.#h.run(
      { op, key: w.key, call },
      (d) => path(this.#h, { w, call, d, data: encoded(w) }),
    );
  }

  delete(key: string, call: Call): Promise<boolean> {
    // A revision this run saw can stand in for a look at the key; then the run loses its
    // authority over the key, whatever happens.
    const seen = call.scope?.revision(this.#h.ns, key);
    call.scope?.forget(this.#h.ns, key);
    return this.#h.run(
      { op: "delete", key, call },
      (d) => deleteKey(this.#h, { key, call, seen, d }),
    );
  }
}

function encoded(w: ValidWrite): Uint8Array {
  return ENCODER.encode(serializeValid(w.description, w.content));
}
