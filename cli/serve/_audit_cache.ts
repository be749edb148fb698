// The last audit of the store (`auditStore`: damaged entries, history problems, stray locks), for
// the memories page, which must stay fast on a full store where an audit reads every version (1.8 s
// for 1,024 keys of 64 versions). The first use waits for an audit; later uses get the last one and,
// when it is older than `FRESH_MS`, start the next in the background. The check page audits anew.

import { auditStore, type Store, type StoreAudit } from "../../mod.ts";

/** How old an audit may be before a use starts a new one. */
const FRESH_MS = 15_000;

/** An audit and when it was taken. */
export interface TakenAudit {
  readonly audit: StoreAudit;
  /** ISO 8601, when it started. */
  readonly at: string;
}

/** The last audit of one store. */
export class AuditCache {
  readonly #store: Store;
  #last: TakenAudit | undefined;
  #running: Promise<TakenAudit> | undefined;

  constructor(store: Store) {
    this.#store = store;
  }

  /** The last audit (waiting for the first), starting a new one when it is old. */
  async get(): Promise<TakenAudit> {
    const last = this.#last;
    if (last === undefined) return await this.fresh();
    if (Date.now() - Date.parse(last.at) > FRESH_MS) this.fresh().catch(() => {});
    return last;
  }

  /** A new audit (joining one that runs already). */
  fresh(): Promise<TakenAudit> {
    return this.#running ??= (async () => {
      try {
        const at = new Date().toISOString();
        const audit = await auditStore(this.#store);
        return this.#last = { audit, at };
      } finally {
        this.#running = undefined;
      }
    })();
  }

  /** Waits for an audit in flight, if any (on shutdown). */
  async settle(): Promise<void> {
    await this.#running?.catch(() => {});
  }
}
