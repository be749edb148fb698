// Writes held for review, in a file store: `<dir>/.review/`, beside the memories and never among
// them (a dot name is no key). A pending proposal is `p.<id>.json`, a decided one `d.<id>.json`
// (store/proposal_record.ts has the format); `.creates` marks each one added (pending_count.ts).
// A new record is staged, flushed and linked; every change of a pending one (a claim, its
// release, its decision) happens under the proposal's lock (`.<id>.lock`, lock.ts), so of two
// processes deciding one proposal exactly one does. Nothing under `.review` is followed: a
// symlink there makes the call fail, never reach outside.

import { NotFoundError, UnavailableError } from "../../store/errors.ts";
import type { Call, Claim, HeldProposal, Listed, ReviewOps } from "../../store/backend.ts";
import type { HistoryProblem, Proposal } from "../../store/types.ts";
import { decodeProposal, encodeProposal, PROPOSAL_ID } from "../../store/proposal_record.ts";
import { errorKind, quote } from "../../store/text.ts";
import { DirSync } from "./dir_sync.ts";
import {
  close,
  createWith,
  kindOf,
  link,
  listNames,
  makeSubdir,
  openForRead,
  readAll,
  remove,
  removeQuietly,
  rename,
  syncData,
} from "./fs.ts";
import { withLock } from "./lock.ts";
import { PendingCount } from "./pending_count.ts";
import { keyOf, TEMP_SUFFIX } from "./names.ts";
import { selfToken } from "./process.ts";
import { randomHex } from "../../store/random.ts";

/** The directory that holds a file store's proposals. */
export const REVIEW_DIR = ".review";

const MODE = 0o600;
const DIR_MODE = 0o700;
// No record this library writes is larger: a body at the cap, each character escaped.
const MAX_RECORD_BYTES = 1 << 20;
const NAME = /^([pd])\.([0-9a-f]{16})\.json$/;
// Reads go through one buffer, one byte larger than any record, which decoding copies out of.
const READ_BUF = new Uint8Array(MAX_RECORD_BYTES + 1);

/** How the file store was opened, as its review storage needs it. */
export interface FileReviewConfig {
  readonly root: string;
  readonly durable: boolean;
  readonly writable: boolean;
  readonly readBeforeUpdate: boolean;
}

/** The review storage of a file store. */
export function fileReview(config: FileReviewConfig): ReviewOps {
  return new FileReview(config);
}

class FileReview implements ReviewOps {
  readonly readBeforeUpdate: boolean;
  readonly #c: FileReviewConfig;
  readonly #dir: string;
  readonly #sync: DirSync;
  readonly #pending: PendingCount;

  constructor(config: FileReviewConfig) {
    this.#c = config;
    this.readBeforeUpdate = config.readBeforeUpdate;
    this.#dir = `${config.root}/${REVIEW_DIR}`;
    this.#sync = new DirSync(this.#dir);
    this.#pending = new PendingCount(this.#dir);
  }

  // deno-lint-ignore require-await
  async count(): Promise<number> {
    let n = 0;
    for (const { name, isFile } of listNames(this.#c.root)) {
      if (isFile && keyOf(name) !== undefined) n++;
    }
    return n;
  }

  async add(proposal: Proposal, limit: number): Promise<boolean> {
    this.#requireWritable(proposal.key);
    if (!this.#there()) makeSubdir(this.#dir, DIR_MODE);
    this.#checkDir();
    const pending = () => this.#names().filter((n) => n.state === "p").length;
    if (this.#pending.count(limit, pending) >= limit) return false;
    await this.#place(this.#path("p", proposal.id), encodeProposal({ proposal }));
    // Marked only while `.review` is still a directory: never through a symlink swapped in since.
    if (kindOf(this.#dir) === "dir") this.#pending.added();
    else this.#pending.forget();
    return true;
  }

  async withdraw(id: string): Promise<void> {
    if (remove(this.#path("p", id))) await this.#flush();
  }

  async drop(id: string, call: Call): Promise<void> {
    if (!this.#there()) return;
    await withLock({ path: this.#lock(id), key: "", signal: call.signal }, () => {
      remove(this.#path("p", id));
      remove(this.#path("d", id));
    });
    await this.#flush();
  }

  // deno-lint-ignore require-await
  async get(id: string) {
    if (!this.#there()) return undefined;
    const held = this.#read("p", id);
    if (held !== undefined && typeof held !== "string") return { held };
    const decided = this.#read("d", id);
    if (decided !== undefined && typeof decided !== "string") return { decided: decided.proposal };
    return undefined;
  }

  async list(
    which: "pending" | "decided",
    before: number | undefined,
  ): Promise<Listed<HeldProposal>> {
    const items: HeldProposal[] = [];
    const problems: HistoryProblem[] = [];
    if (!this.#there()) return { items, problems };
    const state = which === "pending" ? "p" : "d";
    for (const n of this.#names()) {
      if (n.state !== state) continue;
      const held = this.#read(state, n.id);
      if (held === undefined) continue;
      if (typeof held === "string") {
        problems.push(damaged(n.id, held));
        continue;
      }
      const at = Date.parse(held.proposal.decision?.at ?? held.proposal.at);
      if (before !== undefined && at < before && this.#c.writable) {
        await this.#expire(state, n.id, held.proposal.key, before);
        continue;
      }
      items.push(held);
    }
    return { items, problems };
  }

  async claim(id: string, claim: Claim & { readonly takeOverBefore: number }, call: Call) {
    const { takeOverBefore, ...mine } = claim;
    return await this.#change(id, call, (held) => {
      if (held.claim !== undefined && held.claim.at >= takeOverBefore) return undefined;
      return {
        next: { proposal: held.proposal, claim: mine },
        result: { proposal: held.proposal, previous: held.claim },
      };
    });
  }

  async release(id: string, claim: Claim, call: Call): Promise<void> {
    await this.#change(
      id,
      call,
      (held) =>
        held.claim?.token === claim.token
          ? { next: { proposal: held.proposal }, result: undefined }
          : { next: undefined, result: undefined },
    ).catch((e) => {
      if (!(e instanceof NotFoundError)) throw e;
    });
  }

  async decide(id: string, claim: Claim, decided: Proposal, call: Call): Promise<void> {
    this.#requireWritable(decided.key);
    const pending = this.#path("p", id);
    const bytes = encodeProposal({ proposal: decided });
    const staged = await this.#stage(bytes);
    try {
      const mine = await withLock(
        { path: this.#lock(id), key: decided.key, signal: call.signal },
        () => {
          const held = this.#read("p", id);
          if (held === undefined || typeof held === "string" || held.claim?.token !== claim.token) {
            return false;
          }
          try {
            link(staged, this.#path("d", id));
          } catch (e) {
            // Decided already (a taker finished it): that decision stands.
            if (errorKind(e) !== "EEXIST") throw e;
          }
          remove(pending);
          return true;
        },
      );
      if (!mine) {
        throw new NotFoundError(
          `[memory:file] Cannot decide proposal ${quote(id)}: another operator took it over`,
          { key: decided.key },
        );
      }
    } finally {
      removeQuietly(staged);
    }
    await this.#flush();
  }

  // Changes a pending proposal: `step` sees it and says what it becomes (`undefined`: another
  // holds it, a NotFoundError). The new record is staged first, then put in place under the
  // proposal's lock only if the record is still the one `step` saw.
  async #change<T>(
    id: string,
    call: Call,
    step: (held: HeldProposal) => { next: HeldProposal | undefined; result: T } | undefined,
  ): Promise<T> {
    const gone = (why: string) =>
      new NotFoundError(`[memory:file] Cannot decide proposal ${quote(id)}: ${why}`);
    for (let attempt = 1;; attempt++) {
      const seen = this.#there() ? this.#read("p", id) : undefined;
      if (seen === undefined || typeof seen === "string") {
        throw gone("no pending proposal has this id");
      }
      const key = seen.proposal.key;
      this.#requireWritable(key);
      const done = step(seen);
      if (done === undefined) throw gone("another operator is deciding it");
      if (done.next === undefined) return done.result;
      const staged = await this.#stage(encodeProposal(done.next));
      try {
        const placed = await withLock({ path: this.#lock(id), key, signal: call.signal }, () => {
          const now = this.#read("p", id);
          if (now === undefined || typeof now === "string") return "gone";
          if (!sameClaim(now.claim, seen.claim)) return "changed";
          rename(staged, this.#path("p", id));
          return "placed";
        });
        if (placed === "gone") throw gone("no pending proposal has this id");
        if (placed === "placed") {
          await this.#flush();
          return done.result;
        }
      } finally {
        removeQuietly(staged);
      }
      if (attempt >= 4) throw gone("another operator is deciding it");
    }
  }

  // Removes an expired record (a pending one only when no live claim holds it).
  async #expire(state: "p" | "d", id: string, key: string, before: number): Promise<void> {
    await withLock({ path: this.#lock(id), key, signal: undefined }, () => {
      const held = this.#read(state, id);
      if (held === undefined || typeof held === "string") return;
      if (held.claim !== undefined && held.claim.at >= before) return;
      remove(this.#path(state, id));
    });
    await this.#flush();
  }

  // A new record at `path`: staged, flushed, linked (never over another).
  async #place(path: string, bytes: Uint8Array): Promise<void> {
    const staged = await this.#stage(bytes);
    try {
      link(staged, path);
    } finally {
      removeQuietly(staged);
    }
    await this.#flush();
  }

  async #stage(bytes: Uint8Array): Promise<string> {
    this.#checkDir();
    const temp = `${this.#dir}/.r.${selfToken()}.${randomHex(8)}${TEMP_SUFFIX}`;
    const fd = createWith(temp, { bytes, mode: MODE });
    try {
      await syncData(fd);
    } catch (e) {
      removeQuietly(temp);
      throw e;
    } finally {
      close(fd);
    }
    return temp;
  }

  #flush(): Promise<void> {
    return this.#c.durable ? this.#sync.flush() : Promise.resolve();
  }

  // The record in `p.<id>.json` or `d.<id>.json`: `undefined` when there is none, the reason when
  // it cannot be read.
  #read(state: "p" | "d", id: string): HeldProposal | string | undefined {
    const path = this.#path(state, id);
    let fd: number;
    try {
      fd = openForRead(path);
    } catch (e) {
      const kind = errorKind(e);
      if (kind === "ENOENT") return undefined;
      return kind === "ELOOP" ? "it is a symlink" : `it cannot be opened (${kind})`;
    }
    try {
      // Read into one buffer (a stat per file would cost more than the read).
      const buf = READ_BUF;
      const n = readAll(fd, buf);
      if (n > MAX_RECORD_BYTES) return "it is larger than any record";
      const held = decodeProposal(buf.subarray(0, n), id);
      if (typeof held !== "string" && (state === "d") !== (held.proposal.decision !== undefined)) {
        return state === "d" ? "it holds no decision" : "it holds a decision";
      }
      return held;
    } catch (e) {
      return `it cannot be read (${errorKind(e)})`;
    } finally {
      close(fd);
    }
  }

  #names(): { state: "p" | "d"; id: string }[] {
    if (!this.#there()) return [];
    const out: { state: "p" | "d"; id: string }[] = [];
    for (const { name, isFile } of listNames(this.#dir)) {
      const m = isFile ? NAME.exec(name) : null;
      if (m !== null) out.push({ state: m[1] as "p" | "d", id: m[2]! });
    }
    return out;
  }

  // Whether `.review` exists (and is a directory, never a symlink to one).
  #there(): boolean {
    const kind = kindOf(this.#dir);
    if (kind === null) return false;
    this.#checkDir(kind);
    return true;
  }

  #checkDir(kind = kindOf(this.#dir)): void {
    if (kind !== "dir") {
      throw new UnavailableError(
        `[memory:file] Cannot use the review queue: ${REVIEW_DIR} in the memory directory is not a directory (a symlink or a file); an operator must remove it`,
      );
    }
  }

  #path(state: "p" | "d", id: string): string {
    if (!PROPOSAL_ID.test(id)) throw new Error("not a proposal id");
    return `${this.#dir}/${state}.${id}.json`;
  }

  #lock(id: string): string {
    return `${this.#dir}/.${id}.lock`;
  }

  #requireWritable(key: string): void {
    if (!this.#c.writable) {
      throw new UnavailableError(
        `[memory:file] Cannot hold or decide a write of memory ${
          quote(key)
        }: the store was opened read-only`,
        { key },
      );
    }
  }
}

function sameClaim(a: Claim | undefined, b: Claim | undefined): boolean {
  return a?.token === b?.token && a?.at === b?.at;
}

function damaged(id: string, why: string): HistoryProblem {
  return {
    key: `(proposal ${id})`,
    problem: "damaged",
    reason: `The review record of proposal ${id} cannot be read: ${why}`,
  };
}
