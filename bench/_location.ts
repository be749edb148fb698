// Where a run's data lives: a fresh directory or bucket per run, seeded untimed, opened through
// the library's public openers, removed afterwards.

import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import { openFileStore, openJetStreamStore, serializeEntry, type Store } from "../mod.ts";
import type { Backend, Location } from "./_protocol.ts";

/** The description every benchmark entry carries. */
export const DESCRIPTION = "Benchmark entry: a note one worker wrote for another to read";

/** Fresh locations under one scratch directory and one bucket-name prefix. */
export class Locations {
  readonly #work: string;
  readonly #nc: NatsConnection | undefined;
  readonly #prefix: string;
  #seq = 0;

  constructor(work: string, nc: NatsConnection | undefined, prefix: string) {
    this.#work = work;
    this.#nc = nc;
    this.#prefix = prefix;
  }

  /** A fresh directory (file), bucket (jetstream), or both (a peer's place); removed on dispose. */
  async fresh(backend?: Backend): Promise<Location & AsyncDisposable> {
    const seq = this.#seq++;
    const dir = backend === "jetstream" ? undefined : `${this.#work}/run-${seq}`;
    const bucket = backend === "file" ? undefined : `${this.#prefix}_${seq}`;
    if (dir !== undefined) await Deno.mkdir(dir, { recursive: true });
    if (bucket !== undefined) await new Kvm(needNats(this.#nc)).create(bucket, { history: 1 });
    return {
      ...(dir === undefined ? {} : { dir }),
      ...(bucket === undefined ? {} : { bucket }),
      [Symbol.asyncDispose]: async () => {
        if (dir !== undefined) await Deno.remove(dir, { recursive: true }).catch(() => {});
        if (bucket === undefined) return;
        await new Kvm(needNats(this.#nc)).open(bucket).then((kv) => kv.destroy()).catch(() => {});
      },
    };
  }
}

/** The NATS connection, or an error saying there is none. */
export function needNats(nc: NatsConnection | undefined): NatsConnection {
  if (nc === undefined) throw new Error("No NATS connection");
  return nc;
}

/** Writes entries holding `body` under `keys` with plain writes or puts (set-up, not measured). */
export async function seed(
  location: Location,
  keys: readonly string[],
  body: string,
  nc: NatsConnection | undefined,
): Promise<void> {
  const bytes = new TextEncoder().encode(serializeEntry(DESCRIPTION, body));
  if (location.dir !== undefined) {
    for (const key of keys) await Deno.writeFile(`${location.dir}/${key}.md`, bytes);
    return;
  }
  const kv = await new Kvm(needNats(nc)).open(location.bucket as string);
  // A window of puts in flight keeps the set-up short without flooding the server.
  for (let i = 0; i < keys.length; i += 64) {
    await Promise.all(keys.slice(i, i + 64).map((key) => kv.put(key, bytes)));
  }
}

/**
 * The library's store over `location`: a file store over its directory, else a jetstream store
 * over its bucket (flat keyspace, defaults otherwise: read-before-update on, 5 s call timeout).
 */
export function openStore(
  location: Location,
  nc: NatsConnection | undefined,
  readBeforeUpdate = false,
): Promise<Store> {
  if (location.dir !== undefined) return openFileStore({ dir: location.dir, readBeforeUpdate });
  return openJetStreamStore({ bucket: location.bucket as string, prefix: "" }, {
    nc: needNats(nc),
  });
}
