// The last audit of the store (`auditStore`: damaged entries, history problems, stray locks), for
// the memories page, which must stay fast on a full store where an audit reads every version (about
// 2 s for 1,024 keys of 64 versions, with the file backend's synchronous reads holding the process
// meanwhile). So an audit runs only when asked for: once as the console starts, and at each visit
// of the check page, whose answer the memories page then shows, with its time.

import { auditStore, type Store, type StoreAudit } from "../../mod.ts";

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

  /** The last audit (waiting for the first, or the one running). */
  async get(): Promise<TakenAudit> {
    return this.#last ?? await this.fresh();
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
