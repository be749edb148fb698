// The jetstream backend's sidecar (store/sidecar.ts): a stream of its own, `KVS_<bucket>`, one
// subject per record, `$KVS.<bucket>.<prefix>.<space>.<key>` (the prefix `~` for a flat
// keyspace, which no prefix can be), keeping each subject's last message. Apart from the bucket's
// stream, so no listing, count or history reads it. Made on first use with the bucket's
// replicas and storage; a connection without the permission to make it gets UnavailableError,
// and the search then keeps its cache in memory. A space is read in one pass (`readAll`).

// Types only: a file-only program must never load the NATS modules (the opener loads them).
import type { StreamConfig } from "@nats-io/jetstream";
import { UnavailableError } from "../../store/errors.ts";
import type { Call } from "../../store/backend.ts";
import { SIDECAR_SPACE, type SidecarChange, type SidecarOps } from "../../store/sidecar.ts";
import { apiCode, Deadline, errorName, PREFIX, STREAM_NOT_FOUND, withDeadline } from "./errors.ts";
import type { BackendConfig } from "./handle.ts";
import { readAll } from "./scan.ts";

/** The sidecar of one jetstream store handle (its bucket and prefix). */
export class JetStreamSidecar implements SidecarOps {
  readonly #c: BackendConfig;
  readonly #stream: string;
  readonly #root: string;
  #made = false;

  constructor(config: BackendConfig) {
    this.#c = config;
    this.#stream = `KVS_${config.bucket}`;
    this.#root = `$KVS.${config.bucket}.${config.prefix === "" ? "~" : config.prefix}.`;
  }

  read(space: string, call: Call): Promise<Map<string, Uint8Array>> {
    const under = this.#under(space);
    return this.#run("read", call, async (d) => {
      const out = new Map<string, Uint8Array>();
      try {
        const { complete } = await readAll(this.#c, {
          stream: this.#stream,
          filter: `${under}>`,
          d,
          lastPerSubject: true,
          headersOnly: false,
          leave: true,
          onMessage: (m) => {
            if (m.data.length > 0) out.set(m.subject.slice(under.length), new Uint8Array(m.data));
            else out.delete(m.subject.slice(under.length));
          },
        });
        if (!complete) throw new UnavailableError(`${PREFIX} Cannot read the sidecar: cut short`);
      } catch (e) {
        if (apiCode(e) === STREAM_NOT_FOUND) return new Map();
        throw e;
      }
      return out;
    });
  }

  update(space: string, change: SidecarChange, call: Call): Promise<void> {
    const under = this.#under(space);
    return this.#run("update", call, async () => {
      await this.#make();
      const { js, jsm } = this.#c;
      await Promise.all([
        ...[...change.put].map(([key, value]) => js.publish(`${under}${key}`, value)),
        ...change.remove.map((key) =>
          jsm.streams.purge(this.#stream, { filter: `${under}${key}` })
        ),
      ]);
    });
  }

  /** Purges `key`'s subject in every space (a redaction's or purge's); no stream, nothing kept. */
  forget(key: string, call: Call): Promise<void> {
    return this.#run("update", call, async () => {
      try {
        await this.#c.jsm.streams.purge(this.#stream, { filter: `${this.#root}*.${key}` });
      } catch (e) {
        if (apiCode(e) !== STREAM_NOT_FOUND) throw e;
      }
    });
  }

  #under(space: string): string {
    if (!SIDECAR_SPACE.test(space)) throw new RangeError(`Illegal sidecar space ${space}`);
    return `${this.#root}${space}.`;
  }

  // Makes the sidecar's stream when it is missing, like the bucket's (replicas, storage).
  async #make(): Promise<void> {
    if (this.#made) return;
    const { jsm, stream, bucket } = this.#c;
    try {
      await jsm.streams.info(this.#stream);
    } catch (e) {
      if (apiCode(e) !== STREAM_NOT_FOUND) throw e;
      const { config } = await jsm.streams.info(stream);
      const made: Partial<StreamConfig> & { name: string } = {
        name: this.#stream,
        subjects: [`$KVS.${bucket}.>`],
        retention: "limits" as StreamConfig["retention"],
        max_msgs_per_subject: 1,
        max_msg_size: -1,
        storage: config.storage,
        num_replicas: config.num_replicas,
        discard: "old" as StreamConfig["discard"],
        deny_purge: false,
      };
      try {
        await jsm.streams.add(made);
      } catch (added) {
        // Made by another handle meanwhile.
        if (apiCode(added) === undefined) throw added;
        await jsm.streams.info(this.#stream);
      }
    }
    this.#made = true;
  }

  #run<T>(what: string, call: Call, fn: (d: Deadline) => Promise<T>): Promise<T> {
    const { timeout } = this.#c;
    const d = new Deadline(timeout);
    return withDeadline(fn(d), {
      ms: timeout,
      signal: call.signal,
      fail: (why) => {
        d.cancel();
        return new UnavailableError(
          `${PREFIX} Cannot ${what} the sidecar: ${
            why === "timeout" ? "NATS did not answer" : "aborted"
          }`,
        );
      },
    }).catch((e) => {
      throw e instanceof UnavailableError
        ? e
        : new UnavailableError(`${PREFIX} Cannot ${what} the sidecar: ${errorName(e)}`, {
          cause: e,
        });
    }).finally(() => d.cancel());
  }
}
